"""The built wheel works as a user installs it: `pip install`, then `qa-service ingest && qa-service serve`
from a folder that is not the checkout, with nothing read from the checkout or the working directory."""

from __future__ import annotations

import importlib.util
import os
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import requests

from tests.serverkit import free_port, wait_until_up
from qa_service import __version__
from tests.conftest import ROOT, SEEDS


def test_the_license_file_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built offline from this checkout with the build backend the dev extras install."""
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling (a dev extra) is not installed: pip install -e '.[dev]'")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (built,) = out.glob("qa_service-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_ships_what_runs_from_any_folder(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"qa_service/seeds/{p.name}" for p in SEEDS.glob("*.txt")} <= names
    assert {"qa_service/default.toml", "qa_service/prompts/system.md", "qa_service/web/static/index.html",
            "qa_service/assets/minilm/tokenizer.json", f"qa_service-{__version__}.dist-info/licenses/LICENSE"} <= names
    assert not any("__pycache__" in name for name in names)


def fresh_venv(folder: Path, wheel: Path) -> Path:
    """A new venv with the wheel installed; its dependencies are those of the environment running the tests.

    `venv --system-site-packages` would not see them: this environment is itself a venv, and a venv
    made from it inherits the base interpreter's site-packages, which hold none of chromadb, onnxruntime
    and the rest. A .pth line adds this environment's site-packages after the venv's own, so nothing
    heavy is reinstalled (no network) while `qa_service` is the wheel's: a path line in a .pth is not a
    site dir, so the editable install's own .pth (pointing at a checkout) is never read."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    Path(own, "test_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    return folder / "bin"


@pytest.mark.slow
def test_pip_install_then_ingest_and_serve_from_another_folder(wheel, tmp_path):
    """From any folder, `qa-service ingest` failed with "seeds: no such file or folder"."""
    bin_dir = fresh_venv(tmp_path / "venv", wheel)
    where = tmp_path / "elsewhere"
    where.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QA_", "OPENAI_", "PYTHON"))}
    env["TMPDIR"] = str(tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(bin_dir / "qa-service"), *args], cwd=where, env=env, capture_output=True, text=True, timeout=600)

    located = subprocess.run([str(bin_dir / "python"), "-c", "import qa_service; print(qa_service.__file__)"],
                             cwd=where, env=env, capture_output=True, text=True, check=True).stdout
    assert located.startswith(str(tmp_path / "venv"))
    assert cli("--version").stdout == f"qa-service, version {__version__}\n"
    assert cli("-h").returncode == 0
    ingested = cli("ingest")
    assert ingested.returncode == 0, ingested.stderr
    assert "57 papers (57 added" in ingested.stdout and (where / "data").is_dir()

    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([str(bin_dir / "qa-service"), "serve", "--port", str(port)], cwd=where, env=env, stdout=log, stderr=log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, "/readyz", server)
        answer = requests.post(f"{url}/api/ask", json={"question": "What is RouterArena?"}, timeout=60).json()
        assert answer["grounded"] and answer["citations"][0]["label"] == "RouterArena"
        assert "qa-service" in requests.get(url, timeout=10).text  # the chat page ships too
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
