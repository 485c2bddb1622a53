"""Shared fixtures: a network guard, temporary data dirs, one seed index per session, and flaskr's three:
`app` (create_app with the test settings), `client` (its test client) and `runner` (click's CliRunner)."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from tests.serverkit import free_port, wait_until_up
from qa_service.answering.extractive import ExtractiveModel
from qa_service.answering.pipeline import Answerer
from qa_service.config import Settings, load_settings
from qa_service.corpus.reading import load_corpus
from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora
from qa_service.store.index import Index
from qa_service.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
TUNE_QUESTIONS = ROOT / "tests" / "data" / "tune_questions.jsonl"  # the split settings are chosen on
HELDOUT_QUESTIONS = ROOT / "tests" / "data" / "heldout_questions.jsonl"  # reported, never tuned on
FRESH_QUESTIONS = ROOT / "tests" / "data" / "fresh_questions.jsonl"  # written blind, before the answerability change
FRESH2_QUESTIONS = ROOT / "tests" / "data" / "fresh2_questions.jsonl"  # written blind, before the second answerability pass


class NetworkBlocked(RuntimeError):
    pass


def _is_local(address: object) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True, scope="session")
def no_network():
    """Any connection beyond loopback fails the test that made it: everything runs offline."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(self, address):
        if not _is_local(address):
            raise NetworkBlocked(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    def guarded_ex(self, address):
        if not _is_local(address):
            raise NetworkBlocked(f"test tried to reach the network: {address!r}")
        return real_connect_ex(self, address)

    socket.socket.connect, socket.socket.connect_ex = guarded, guarded_ex
    yield
    socket.socket.connect, socket.socket.connect_ex = real_connect, real_connect_ex


def make_settings(data_dir: Path, **overrides) -> Settings:
    """Settings from the shipped defaults, with the data dir (and anything else) overridden."""
    return load_settings(ROOT / "config" / "default.toml", env={}, data_dir=str(data_dir), **overrides)


@pytest.fixture(scope="session")
def seed_papers():
    return load_corpus([SEEDS])


@pytest.fixture(scope="session")
def seed_settings(tmp_path_factory, seed_papers) -> Settings:
    """The 57 seed abstracts, ingested once for all read-only tests."""
    settings = make_settings(tmp_path_factory.mktemp("seed-data"), seeds_dir=str(SEEDS))
    Index(settings).ingest(seed_papers)
    return settings


@pytest.fixture(scope="session")
def seed_index(seed_settings) -> Index:
    index = Index(seed_settings)
    index.load_lexical()
    return index


@pytest.fixture
def settings(tmp_path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture
def app(seed_settings, seed_index) -> Flask:
    """The app over the seed index, as flaskr's `create_app({"TESTING": True, ...})`: a new one per test."""
    app = create_app(seed_settings, index=seed_index)
    app.config["TESTING"] = True
    return app


@pytest.fixture
def client(app) -> FlaskClient:
    """Requests to `app` without a server."""
    return app.test_client()


@pytest.fixture
def runner(settings) -> CliRunner:
    """`qa-service` commands in-process (`runner.invoke(main, [...])`), over this test's empty data dir."""
    return CliRunner(env={"QA_DATA_DIR": settings.data_dir, "QA_CONFIG": str(ROOT / "config" / "default.toml")})


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    target = tmp_path / "seeds"
    shutil.copytree(SEEDS, target)
    return target


def ingested(data_dir: Path, *paths: Path) -> Index:
    """A fresh index in `data_dir` holding the corpus files given, BM25 loaded: a small corpus of a test's own."""
    index = Index(make_settings(data_dir))
    index.ingest(load_corpus(list(paths)))
    index.load_lexical()
    return index


def write_seed_file(path: Path, abstracts: list[str]) -> Path:
    path.write_text("ICLR 2026 Papers\n\n" + "\n\n".join(abstracts) + "\n", encoding="utf-8")
    return path


def offline_answerer(folder: Path, abstracts: list[str]) -> Answerer:
    """The offline (extractive) answerer over a corpus of a test's own abstracts, written and ingested in `folder`."""
    return answerer_over(ingested(folder / "data", write_seed_file(folder / "papers.txt", abstracts)))


def answerer_over(index: Index, **overrides) -> Answerer:
    """The offline answerer over an index, its settings changed by `overrides` (a setting turned off, to compare)."""
    settings = dataclasses.replace(index.settings, **overrides)
    return build_answerer(settings, ExtractiveModel(), Corpora(settings, index))


@contextmanager
def gunicorn(data_dir: Path, env: dict[str, str]) -> Iterator[str]:
    """`qa-service serve` (gunicorn) on a free port of 127.0.0.1 over `data_dir`, its output in data_dir/server.log:
    the URL once /healthz answers, and a clean stop after the block, so the tests start the production server one way."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (data_dir / "server.log").open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(port)],
                                   env={**os.environ, "QA_DATA_DIR": str(data_dir), **env}, cwd=ROOT, stdout=log, stderr=log)
    try:
        wait_until_up(url, "/healthz", process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: starts processes (a Chroma server, the CLI) and runs for minutes")
