"""Clients that trickle their headers, against the production server on loopback, with the shipped settings.

    python bench/trickle.py [--clients 40] [--every 5] [--seconds 60] [--data-dir DIR]

Opens CLIENTS connections that each send a request line, then one header line every EVERY seconds
(never silent for client_timeout), and probes /healthz once a second meanwhile; reports how many
probes had no answer within 5 s and the slowest. Stops by itself; sends traffic to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, start_server  # noqa: E402

PROBE_TIMEOUT = 5.0  # seconds: the bar for "/healthz answers"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="qa-trickle-")
    subprocess.run([sys.executable, "-m", "qa_service.cli", "ingest", str(ROOT / "seeds" / "000_e3b5a0511f204a83.txt")],
                   check=True, cwd=ROOT, env={**os.environ, "QA_DATA_DIR": data_dir}, capture_output=True)
    process, url, _ = start_server(data_dir, threads=32)  # the shipped `threads`
    host, port = url.rsplit("/", 1)[1].split(":")
    probes, unanswered, slowest = 0, 0, 0.0
    socks = [socket.create_connection((host, int(port))) for _ in range(args.clients)]
    try:
        for sock in socks:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        started = last_line = time.monotonic()
        while time.monotonic() - started < args.seconds:
            if time.monotonic() - last_line >= args.every:
                last_line = time.monotonic()
                for sock in socks:
                    try:
                        sock.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        pass  # closed by the server (request_timeout)
            asked = time.monotonic()
            try:
                requests.get(url + "/healthz", timeout=PROBE_TIMEOUT)
                slowest = max(slowest, time.monotonic() - asked)
            except requests.RequestException:
                unanswered += 1
            probes += 1
            time.sleep(max(0.0, 1.0 - (time.monotonic() - asked)))
    finally:
        for sock in socks:
            sock.close()
        process.terminate()
        process.wait(timeout=30)
    report = {"clients": args.clients, "every_s": args.every, "seconds": args.seconds, "probes": probes,
              "unanswered_within_5s": unanswered, "slowest_ms": round(slowest * 1000)}
    print(json.dumps(report, indent=2))
    return 0 if unanswered == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
