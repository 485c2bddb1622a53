"""The server's log: one line per record, and no credentials in any line."""

import json
import logging

import pytest

from qa_service.answering.models import OpenAIChatModel
from qa_service.records import ModelRequest
from qa_service.web.serving import configure_logging
from qa_service.web.app import create_app
from tests.conftest import make_settings
from tests.fake_openai import FakeOpenAI

QUIETED = ("httpx", "httpx2", "httpcore", "httpcore2")


@pytest.fixture
def server_log(capsys):
    """configure_logging as `serve` runs it, writing to a captured stderr; logging restored after."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level, {name: logging.getLogger(name).level for name in QUIETED}

    def configure(settings):
        configure_logging(settings)
        capsys.readouterr()

    yield configure
    root.handlers[:], root.level = saved[0], saved[1]
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture
def fake_server():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.mark.parametrize("log_json", [False, True])
def test_a_model_call_logs_no_credentials(tmp_path, fake_server, server_log, capsys, log_json):
    port = fake_server.server.server_address[1]
    url = f"http://user:hunter2@127.0.0.1:{port}/v1?api-key=hunter2"
    settings = make_settings(tmp_path, openai_api_key="", openai_base_url=url, model="fake-model", model_retries=0, log_json=log_json)
    server_log(settings)
    logging.getLogger().setLevel(logging.DEBUG)  # even with debug logs on
    reply = OpenAIChatModel(settings).complete(ModelRequest([{"role": "user", "content": "hi"}], "hi", [], max_tokens=5))
    assert reply.text and len(fake_server.requests) == 1
    logging.getLogger("httpx2").warning("retrying %s", f"{url}/chat/completions")  # a transport warning still gets through
    err = capsys.readouterr().err
    assert "hunter2" not in err and "HTTP Request: POST http" not in err  # the per-call transport line is quieted
    assert "retrying http://***@127.0.0.1" in err and "api-key=***" in err


def test_tracebacks_and_messages_are_redacted_and_one_line(tmp_path, server_log, capsys):
    server_log(make_settings(tmp_path))
    log = logging.getLogger("qa_service.test")
    try:
        raise ConnectionError("cannot connect to redis://:hunter2@cache:6379")
    except ConnectionError:
        log.exception("storage at %s failed:\nFORGED LINE", "redis://:hunter2@cache:6379")
    err = capsys.readouterr().err
    assert "hunter2" not in err and "redis://***@cache:6379" in err
    assert err.splitlines()[0].endswith("failed:\\nFORGED LINE")  # the message is one line; the traceback follows


def test_json_log_lines_are_redacted(tmp_path, server_log, capsys):
    server_log(make_settings(tmp_path, log_json=True))
    logging.getLogger("qa_service.test").warning("model at http://u:hunter2@h/v1 said\u2028FORGED")
    [line] = capsys.readouterr().err.splitlines()
    assert json.loads(line)["message"] == "model at http://***@h/v1 said\\u2028FORGED"


def test_a_forged_access_log_line_stays_one_line(seed_settings, seed_index, server_log, capsys):
    server_log(seed_settings)
    client = create_app(seed_settings, index=seed_index).test_client()
    forged = "2026-01-01 00:00:00,000 INFO qa_service.access [admin] GET /admin 200 0.1ms"
    client.get("/api/papers/nope%0a" + forged.replace(" ", "%20"), headers={"X-Request-ID": "forge-test"})
    lines = [line for line in capsys.readouterr().err.splitlines() if "qa_service.access" in line]
    assert len(lines) == 1 and "[forge-test] GET /api/papers/nope\\n" + forged in lines[0]
