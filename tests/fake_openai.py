"""A small OpenAI-compatible server on 127.0.0.1 for end-to-end tests of the real SDK."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    """Replies by script: each entry is a behaviour ('reply', 'stream', 401, 429, 500, 'slow', ...)."""

    def __init__(self):
        self.script: list[tuple[str, str]] = []
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.default = ("reply", "Default answer [1].")
        self.gate = threading.Event()  # 'gated-stream' waits for it before its first word
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):
                self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                kind, text = fake.script.pop(0) if fake.script else fake.default
                fake.behave(self, kind, text, body)

            def _json(self, status, payload, headers=None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def enqueue(self, kind: str, text: str = "") -> None:
        self.script.append((kind, text))

    def behave(self, h, kind: str, text: str, body: dict) -> None:
        if kind == "reply":
            h._json(200, completion(text, body.get("model", "fake")))
        elif kind == "stream":
            self._stream(h, text, broken=False)
        elif kind == "broken-stream":
            self._stream(h, text, broken=True)
        elif kind == "cut-stream":
            self._stream(h, text, broken=False, cut=True)
        elif kind == "gated-reply":
            self.gate.wait(30)
            h._json(200, completion(text, body.get("model", "fake")))
        elif kind == "gated-stream":
            self.gate.wait(30)
            self._stream(h, text, broken=False)
        elif kind == "slow":
            time.sleep(float(text or 3))
            h._json(200, completion("late [1].", "fake"))
        elif kind == "malformed":
            data = b"{not json"
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        elif kind == "no-choices":
            h._json(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []})
        else:
            status = int(kind)
            headers = {"Retry-After": "0"} if status == 429 else {}
            h._json(status, {"error": {"message": f"fake error {status}", "type": "fake", "code": str(status)}}, headers)

    def _stream(self, h, text: str, broken: bool, cut: bool = False) -> None:
        """Deltas, a finish_reason chunk, usage, [DONE]; `cut` closes after half the words, as a
        server that dies mid-answer does (no finish_reason, no [DONE])."""
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.end_headers()
        words = text.split(" ")
        for i, word in enumerate(words):
            if broken and i == len(words) // 2:
                h.wfile.write(b"data: {broken json\n\n")
                h.wfile.flush()
                return
            if cut and i == len(words) // 2:
                h.close_connection = True
                return
            delta = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                     "choices": [{"index": 0, "delta": {"content": word + (" " if i < len(words) - 1 else "")}, "finish_reason": None}]}
            h.wfile.write(f"data: {json.dumps(delta)}\n\n".encode())
            h.wfile.flush()
        stop = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        h.wfile.write(f"data: {json.dumps(stop)}\n\n".encode())
        usage = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [],
                 "usage": {"prompt_tokens": 11, "completion_tokens": len(words), "total_tokens": 11 + len(words)}}
        h.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        h.wfile.flush()


def completion(text: str, model: str) -> dict:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 123, "completion_tokens": 9, "total_tokens": 132},
    }
