"""What a command checks before it opens anything: the Chroma server, the data dir, serve's port.

Each mistake an operator can make here (a Chroma server that is down, a URL that is not Chroma,
a data dir that cannot be written, a port that is taken) is one line naming the setting to
change, instead of the library's traceback from deep inside the first call.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile

import requests

from .config import Settings, redact_url
from .errors import ConfigError, QAError

CHROMA_PROBE_SECONDS = 5.0  # a heartbeat answers in milliseconds; a server that takes longer is not usable either


class ServiceUnavailable(QAError):
    """A server the command needs is not answering: start it (or fix its URL) and run the command again."""

    status = 503
    code = "service_unavailable"
    exit_code = 69  # EX_UNAVAILABLE


def check_chroma(settings: Settings) -> None:
    """With QA_CHROMA_URL, the server must answer Chroma's heartbeat; nothing to check for the embedded store."""
    if not settings.chroma_url:
        return
    url = redact_url(settings.chroma_url)
    probe = settings.chroma_url.rstrip("/") + "/api/v2/heartbeat"
    try:
        reply = requests.get(probe, timeout=CHROMA_PROBE_SECONDS)
    except requests.RequestException as exc:
        reason = "connection refused" if isinstance(exc, requests.ConnectionError) else type(exc).__name__
        raise ServiceUnavailable(
            f"cannot reach the Chroma server at {url} ({reason}): start it (chroma run --path DIR --host 127.0.0.1 "
            f"--port 8001) or fix QA_CHROMA_URL (empty uses the embedded store in QA_DATA_DIR)") from None
    try:
        answered = reply.ok and "nanosecond heartbeat" in reply.json()
    except ValueError:
        answered = False
    if not answered:
        raise ConfigError(
            f"{url} answers, but not as a Chroma server (HTTP {reply.status_code} to /api/v2/heartbeat): set QA_CHROMA_URL "
            f"to the address `chroma run` prints (http://HOST:PORT), or empty for the embedded store")


def check_data_dir(settings: Settings) -> None:
    """A command that writes must be able to write the data dir, or create it: tried in the nearest folder
    that exists, leaving nothing behind (a refused command creates no data dir)."""
    folder = settings.data_path.absolute()
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    try:
        if not existing.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ConfigError(f"cannot write the data dir {settings.data_dir} ({existing}: {reason}): set QA_DATA_DIR to a folder "
                          f"you may write (it is created if missing)") from None


def check_port(host: str, port: int) -> None:
    """serve's address must be free to bind: gunicorn would retry five times and print eleven lines over six seconds."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot bind to host {host!r} ({exc.strerror}): set --host or QA_HOST to an address "
                          f"of this machine (127.0.0.1, or 0.0.0.0 for every interface)") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise ConfigError(_bind_message(host, port, exc)) from None


def _bind_message(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use (another `qa-service serve`?): stop that process, "
                f"or choose another port with --port or QA_PORT")
    if exc.errno == errno.EACCES:
        return f"port {port} on {host} needs privileges to bind: choose a port above 1023 with --port or QA_PORT"
    return f"cannot listen on {host}:{port} ({exc.strerror}): set --host/QA_HOST and --port/QA_PORT to an address of this machine"
