"""Issue 25 (6): every command with every wrong setting a person can make: one line on stderr, no traceback,
the exit code the README documents. Before, 49 to 123 lines of traceback for most of them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.common import free_port
from qa_service.cli import main
from tests.conftest import ROOT, SEEDS

UNREACHABLE = 69  # the Chroma server cannot be reached: start it, then try again
ERROR = 1  # a setting that cannot work (one line says which and what to write)

# Every command, as a person runs it (paths and questions that are fine).
COMMANDS = {
    "ingest": ["ingest", str(SEEDS / "000_e3b5a0511f204a83.txt")],
    "check": ["check"],
    "check --repair": ["check", "--repair"],
    "search": ["search", "What is RouterArena?"],
    "ask": ["ask", "What is RouterArena?"],
    "papers": ["papers"],
    "corpora": ["corpora"],
    "drop": ["drop", "other", "--yes"],
    "eval": ["eval", str(ROOT / "tests" / "data" / "heldout_questions.jsonl")],
}


class NotChroma(BaseHTTPRequestHandler):
    """An HTTP server that is something else (a web app on the port Chroma was meant to have)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b'{"error": "not found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def not_chroma():
    server = HTTPServer(("127.0.0.1", 0), NotChroma)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def wrong_settings(tmp_path_factory, not_chroma) -> dict[str, tuple[dict[str, str], int, str]]:
    """Each mistake: the environment that makes it, the exit code, and a word the one line must hold."""
    folder = tmp_path_factory.mktemp("wrong")
    a_file = folder / "a-file"
    a_file.write_text("not a folder\n")
    return {
        "chroma down": ({"QA_CHROMA_URL": f"http://127.0.0.1:{free_port()}"}, UNREACHABLE, "cannot reach the Chroma server"),
        "chroma url not chroma": ({"QA_CHROMA_URL": not_chroma}, ERROR, "not as a Chroma server"),
        "chroma url malformed": ({"QA_CHROMA_URL": "htp:/127.0.0.1 8001"}, ERROR, "QA_CHROMA_URL"),
        "chroma port out of range": ({"QA_CHROMA_URL": "http://127.0.0.1:99999"}, ERROR, "QA_CHROMA_URL"),
        "data dir a file": ({"QA_DATA_DIR": str(a_file)}, ERROR, "QA_DATA_DIR"),
        "data dir under a file": ({"QA_DATA_DIR": str(a_file / "data")}, ERROR, "QA_DATA_DIR"),
        "port out of range": ({"QA_PORT": "70000"}, ERROR, "QA_PORT"),
        "port not a number": ({"QA_PORT": "eighty"}, ERROR, "QA_PORT"),
        "model url malformed": ({"OPENAI_BASE_URL": "localhost:11434/v1"}, ERROR, "OPENAI_BASE_URL"),
        "model url bad ipv6": ({"OPENAI_BASE_URL": "http://[::1/v1"}, ERROR, "OPENAI_BASE_URL"),
        "k limit zero": ({"QA_MAX_K": "0"}, ERROR, "QA_MAX_K"),
        "collection not a name": ({"QA_COLLECTION": "bad name!"}, ERROR, "QA_COLLECTION"),
        "body limit negative": ({"QA_MAX_BODY_BYTES": "-1"}, ERROR, "QA_MAX_BODY_BYTES"),
    }


def assert_one_line(stderr: str, code: int, expected: int, needle: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr[-2000:]
    assert code == expected and lines[0].startswith("error: ") and needle in lines[0], (code, stderr)


@pytest.mark.parametrize("mistake", ["chroma down", "chroma url not chroma", "chroma url malformed", "chroma port out of range",
                                     "data dir a file", "data dir under a file", "port out of range", "port not a number",
                                     "model url malformed", "model url bad ipv6", "k limit zero", "collection not a name",
                                     "body limit negative"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_with_each_wrong_setting_is_one_line_and_its_exit_code(tmp_path, wrong_settings, command, mistake):
    env, expected, needle = wrong_settings[mistake]
    if mistake == "data dir under a file" and command not in ("ingest", "check", "check --repair", "drop"):
        needle = "QA_DATA_DIR"  # a reader says the index cannot be opened, and which settings to check
    base = {"QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_DATA_DIR": str(tmp_path / "data"), "QA_CHROMA_URL": ""}
    result = CliRunner().invoke(main, COMMANDS[command], env={**base, **env})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert_one_line(result.stderr, result.exit_code, expected, needle)


@pytest.mark.slow
@pytest.mark.parametrize("mistake", ["chroma url malformed", "data dir a file", "port out of range", "model url malformed",
                                     "k limit zero", "rate limit garbage", "answer rate limit unknown unit", "port busy"])
def test_serve_with_each_wrong_setting_is_one_line_and_exit_1(tmp_path, wrong_settings, mistake):
    """`serve` as a process (it would start gunicorn if it did not refuse): refused before gunicorn starts."""
    extra = {"rate limit garbage": ({"QA_RATE_LIMIT": "garbage"}, ERROR, "QA_RATE_LIMIT"),
             "answer rate limit unknown unit": ({"QA_ANSWER_RATE_LIMIT": "5 per fortnight"}, ERROR, "QA_ANSWER_RATE_LIMIT")}
    busy = None
    if mistake == "port busy":
        busy = __import__("socket").socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        env, expected, needle = {"QA_PORT": str(busy.getsockname()[1])}, ERROR, "already in use"
    else:
        env, expected, needle = {**wrong_settings, **extra}[mistake]
    try:
        base = {"QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_DATA_DIR": str(tmp_path / "data"), "QA_CHROMA_URL": "",
                "QA_PORT": str(free_port())}
        done = subprocess.run([sys.executable, "-m", "qa_service.cli", "serve"], env={**os.environ, **base, **env}, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    finally:
        if busy is not None:
            busy.close()
    assert_one_line(done.stderr, done.returncode, expected, needle)


def test_the_readme_documents_every_exit_code_the_cli_uses():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("**Exit codes**"):]
    for code in (0, 1, 2, 3, UNREACHABLE, 75):
        assert f"\n| {code} |" in table, code
    assert Path(ROOT / "qa_service" / "cli.py").read_text().count("69") >= 1


@pytest.mark.parametrize("damage", ["pages", "one page"])
def test_check_repair_on_a_damaged_sqlite_file_says_what_to_do_instead(tmp_path, damage):
    """Before: `check` said `--repair` repairs it, and `check --repair` then printed a Rust panic. Garbage over
    many pages stops the store from opening; over one page, it opens and SQLite's own check finds the damage."""
    import random

    env = {"QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_DATA_DIR": str(tmp_path / "data"), "QA_CHROMA_URL": ""}
    assert CliRunner().invoke(main, COMMANDS["ingest"], env=env).exit_code == 0
    sqlite = tmp_path / "data" / "chroma" / "chroma.sqlite3"
    with sqlite.open("r+b") as handle:  # garbage over pages in the middle, as a bad disk or a torn copy leaves it
        for offset in range(4096 * 2, sqlite.stat().st_size, 4096 * 7) if damage == "pages" else [4096 * 60 + 200]:
            handle.seek(offset)
            handle.write(random.Random(offset).randbytes(512) if damage == "pages" else b"\xa5" * 3600)
    for args in (["check"], ["check", "--repair"]):
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        assert "--repair` repairs" not in result.output and "panic" not in result.output.lower() and "Traceback" not in result.output
        assert result.stderr.strip().count("\n") == 0 and "aside and run `qa-service ingest`" in result.stderr  # the way back
        assert all(line.startswith(("checked", "  store:")) for line in result.stdout.splitlines()), result.stdout
