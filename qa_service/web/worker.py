"""serve's gunicorn worker: gthread, made safe against slow clients, with JSON for gunicorn's own errors.

Three changes to gthread:
- A request's head (request line and headers) is read by the worker's main loop, without a thread:
  a thread gets the connection only once the head is whole. Before, 40 clients each sending a
  header line every 5 s (never silent for client_timeout) held all 32 threads, and /healthz went
  unanswered for as long as they kept at it.
- A client must send its whole request (head, then body) within `request_timeout` of its first
  byte, and may never be silent for `client_timeout`: a trickling body holds a thread that long
  at most (a JSON 408), a trickling or silent head is closed.
- Requests gunicorn refuses before the app (too long a request line, too large or too many
  headers, not HTTP) are answered in JSON like every other error.
"""

from __future__ import annotations

import errno
import json
import logging
import selectors
import socket
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn import http, util
from gunicorn.http.errors import (
    ConfigurationProblem,
    ExpectationFailed,
    ForbiddenProxyRequest,
    InvalidResponseHeader,
    InvalidResponseHeaderName,
    LimitRequestHeaders,
    LimitRequestLine,
    ParseException,
    UnsupportedTransferCoding,
)
from gunicorn.http.unreader import SocketUnreader
from gunicorn.workers.gthread import TConn, ThreadWorker
from werkzeug.http import HTTP_STATUS_CODES

# What gunicorn answers to the parse errors it does not answer with 400 (gunicorn.workers.base.handle_error).
EARLY_STATUS = {LimitRequestLine: 414, LimitRequestHeaders: 431, UnsupportedTransferCoding: 501,
                ExpectationFailed: 417, ForbiddenProxyRequest: 403, ConfigurationProblem: 500}
HEAD_ENDS = (b"\r\n\r\n", b"\n\n")  # gunicorn's parser decides what else is malformed


@dataclass
class _Head:
    """The bytes of a request head read so far, and the times it must keep to."""

    deadline: float  # the whole request by then (request_timeout after its first byte, or after accept)
    last_byte: float  # never silent for client_timeout
    data: bytearray = field(default_factory=bytearray)


class _DeadlineReader(SocketUnreader):
    """gunicorn's socket reader, whose reads stop at the request's deadline (a TimeoutError, so a 408 mid-body)."""

    def __init__(self, sock: socket.socket, client_timeout: float):
        super().__init__(sock)
        self.client_timeout = client_timeout
        self.deadline = float("inf")

    def chunk(self, size_hint: int | None = None) -> bytes:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive whole within request_timeout")
        self.sock.settimeout(min(self.client_timeout, left))
        try:
            return super().chunk(size_hint)
        finally:
            self.sock.settimeout(self.client_timeout)  # writes keep the silence limit


class _TimedConn(TConn):
    """A connection whose every read and write gives up after `client_timeout` seconds of silence."""

    def __init__(self, cfg: Any, sock: socket.socket, client: Any, server: Any, client_timeout: float):
        super().__init__(cfg, sock, client, server)
        self.client_timeout = client_timeout
        self.head: _Head | None = None

    def init(self) -> None:
        super().init()  # gunicorn makes the socket blocking (no timeout) before every request
        self.sock.settimeout(self.client_timeout)

    def close(self, graceful: bool = False) -> None:
        if self.sock.fileno() != -1:  # else QAWorker.handle closed it already (a second close would raise)
            super().close(graceful)


class SilentClients(logging.Filter):
    """gunicorn logs a client that went silent mid-request as a socket error with a traceback; it is one line of news."""

    def __init__(self, client_timeout: float):
        super().__init__()
        self.message = f"closed a connection whose client sent or read nothing for {client_timeout:g} s (client_timeout)"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], TimeoutError):
            record.msg, record.args, record.exc_info, record.exc_text = self.message, (), None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


class QAWorker(ThreadWorker):
    """gunicorn's gthread worker: heads read without a thread, stalled and trickling clients time out, early errors are JSON."""

    def init_process(self) -> None:
        settings = self.app.settings
        self.client_timeout, self.request_timeout = settings.client_timeout, settings.request_timeout
        self.heads: list[_TimedConn] = []
        line, field_size, fields = self.cfg.limit_request_line, self.cfg.limit_request_field_size, self.cfg.limit_request_fields
        self.head_max = line + 2 + (fields + 1) * (field_size + 2)  # past it, gunicorn's parser answers 414 or 431
        logging.getLogger("gunicorn.error").addFilter(SilentClients(self.client_timeout))
        super().init_process()

    def accept(self, listener: socket.socket) -> None:
        """gthread's accept, but the head is read here in the main loop before a thread is asked for."""
        try:
            client_sock, client_addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = _TimedConn(self.cfg, client_sock, client_addr, listener.getsockname(), self.client_timeout)
        self._await_head(conn)

    def on_client_socket_readable(self, conn: TConn, client: socket.socket) -> None:
        """A kept-alive connection's next request: its head too is read here, not in a thread."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._await_head(conn)

    def finish_request(self, conn: TConn, fs: Any) -> None:
        """A kept-alive connection whose client already sent (part of) its next request: that head too is
        read here, with its own deadline (gthread gave it to a thread at once)."""
        done = not fs.cancelled() and fs.exception() is None and fs.result() is True
        if done and self.alive and conn.parser is not None and conn.parser.unreader.buf.getvalue():
            self._await_head(conn, conn.parser.unreader.take_buffered())
            return
        super().finish_request(conn, fs)

    def _await_head(self, conn: _TimedConn, data: bytes = b"") -> None:
        now = time.monotonic()
        conn.head = _Head(deadline=now + self.request_timeout, last_byte=now)
        conn.sock.setblocking(False)
        self.heads.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._read_head, conn))
        if data:
            self._take(conn, data)

    def _read_head(self, conn: _TimedConn, _sock: socket.socket) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client closed (or reset) before sending a whole head
            self._drop_head(conn, "")
            return
        self._take(conn, data)

    def _take(self, conn: _TimedConn, data: bytes) -> None:
        head = conn.head
        assert head is not None
        head.data += data
        head.last_byte = time.monotonic()
        if any(end in head.data for end in HEAD_ENDS) or len(head.data) > self.head_max:
            self._start_request(conn)

    def _start_request(self, conn: _TimedConn) -> None:
        """The head is whole (or over the limits, for the parser to refuse): a thread reads the body and answers."""
        head = conn.head
        assert head is not None
        self.poller.unregister(conn.sock)
        self.heads.remove(conn)
        conn.head = None
        if conn.parser is None:
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.client)
            conn.parser.unreader = _DeadlineReader(conn.sock, self.client_timeout)
        conn.parser.unreader.deadline = head.deadline
        conn.parser.unreader.unread(bytes(head.data))
        conn.data_ready = True  # gthread must not wait for bytes it has already
        self.enqueue_req(conn)

    def _drop_head(self, conn: _TimedConn, why: str) -> None:
        self.poller.unregister(conn.sock)
        self.heads.remove(conn)
        self.nr_conns -= 1
        conn.close()
        if why:
            self.log.info("closed a connection from %s whose request head %s", conn.client[0] if conn.client else "?", why)

    def murder_pending(self) -> None:
        """gthread's sweep of waiting connections, and of heads that are too slow or silent (once a second)."""
        super().murder_pending()
        now = time.monotonic()
        for conn in list(self.heads):
            head = conn.head
            assert head is not None
            if now - head.last_byte > self.client_timeout:
                self._drop_head(conn, f"stopped for {self.client_timeout:g} s (client_timeout)")
            elif now > head.deadline:
                self._drop_head(conn, f"did not arrive whole within {self.request_timeout:g} s (request_timeout)")

    def handle(self, conn: TConn) -> Any:
        """gthread's handle, but a connection it is done with is closed here, in a pool thread.

        gthread closes it in its main loop, waiting up to 2 s for each client to close its side:
        after 50 silent clients it could neither accept nor hand out requests for up to 100 s.
        """
        result = super().handle(conn)
        if not result:
            util.close_graceful(conn.sock)  # the main loop's own close is then a no-op
        return result

    def handle_error(self, req: Any, client: socket.socket, addr: Any, exc: BaseException) -> None:
        """The same statuses as gunicorn's own error page, as our JSON error object."""
        addr = addr or ("", -1)
        if isinstance(exc, ParseException) and not isinstance(exc, (InvalidResponseHeader, InvalidResponseHeaderName)):
            status = next((code for kind, code in EARLY_STATUS.items() if isinstance(exc, kind)), 400)
            self.log.warning("Invalid request from ip=%s: %s", addr[0], exc)
            message = self._early_message(status, exc)
        else:
            self.log.exception("Error handling request")
            status, message = 500, "internal error; see the server log"
        reason = HTTP_STATUS_CODES.get(status, "Error")
        body = json.dumps({"error": {"code": reason.lower().replace(" ", "_"), "message": message}}).encode()
        head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nX-Content-Type-Options: nosniff\r\n\r\n")
        try:
            util.write_nonblock(client, head.encode("latin-1") + body)
        except Exception:  # noqa: BLE001 - the client may be gone; nothing else to do
            self.log.debug("Failed to send error message.")

    def _early_message(self, status: int, exc: BaseException) -> str:
        if status == 414:
            return f"the request line is longer than {self.cfg.limit_request_line} bytes; send long input in a JSON body"
        if status == 431:
            return (f"a header line is longer than {self.cfg.limit_request_field_size} bytes, "
                    f"or there are more than {self.cfg.limit_request_fields} headers")
        return f"the request is not valid HTTP/1.1: {str(exc)[:200]}"
