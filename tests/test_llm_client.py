"""simonw's `llm` CLI (the real package, a dev extra) with the service registered as an OpenAI-compatible model.

`llm` keeps only a reply's content, so this is where the numbered Sources list, with its quotes, has to survive; `-c`
sends the conversation back, which is our history; `llm logs` shows the usage it was sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import llm  # noqa: F401 - installed with the dev extra; the test runs its CLI as a user would
import pytest
from werkzeug.serving import make_server

from qa_service.corpus.tokens import count_tokens
from qa_service.web.app import create_app

pytestmark = pytest.mark.slow  # the `llm` CLI as a subprocess


@pytest.fixture(scope="module")
def server(seed_settings, seed_index):
    app = create_app(seed_settings.replace(rate_limit="", answer_rate_limit=""), index=seed_index)
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


@pytest.fixture
def run_llm(server, tmp_path):
    """`llm ...` with its own user folder, where extra-openai-models.yaml registers the service (README, 'Plugging in')."""
    home = tmp_path / "llm"
    home.mkdir()
    (home / "extra-openai-models.yaml").write_text(
        f"- model_id: qa-service\n  model_name: qa-service\n  api_base: \"{server}/v1\"\n", encoding="utf-8")
    env = {**os.environ, "LLM_USER_PATH": str(home)}
    env.pop("OPENAI_API_KEY", None)

    def run(*args: str) -> str:
        result = subprocess.run([sys.executable, "-m", "llm", *args], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    return run


def test_llm_answers_and_keeps_the_numbered_sources(run_llm):
    for mode in ((), ("--no-stream",)):
        out = run_llm("-m", "qa-service", *mode, "What is RouterArena?")
        assert "RouterArena" in out and "[1]" in out
        assert "Sources:\n[1] RouterArena (000_e3b5a0511f204a83:2)" in out
        assert '    "In this work, we introduce RouterArena, the first open platform enabling comprehensive comparison of LLM routers."' in out


def test_llm_follow_ups_with_c_are_history(run_llm):
    run_llm("-m", "qa-service", "What is Tequila?")
    assert "3.0×" in run_llm("-c", "How much faster is its inference?")


def test_llm_logs_the_usage_and_passes_max_tokens(run_llm):
    out = run_llm("-m", "qa-service", "-o", "max_tokens", "6", "What is RouterArena?")
    assert count_tokens(out.strip()) <= 6
    logged = json.loads(run_llm("logs", "-n", "1", "--json"))[0]
    assert logged["input_tokens"] > 100 and logged["output_tokens"] == count_tokens(logged["response"])
