"""Start-up of a fresh app process against a Chroma server: BM25 rebuilt from Chroma, loaded from
Chroma (stored serialized by ingest), or from the local cache (what today's files cost).

    python bench/stateless.py [--sizes 2000,20000] [--real-up-to 2000] [--out bench/results]

Per size: a `chroma run` server on a temporary folder; the synthetic corpus (bench/synth.py)
ingested into it (real MiniLM vectors up to --real-up-to papers; above that, random unit vectors
under the same model id, since start-up reads no vectors and embedding 70k chunks takes ~25 min
here). Then, in-process: BM25 rebuilt from the chunks in Chroma, fetched from Chroma and
unpacked, and loaded from cache files; and `qa-service serve` (gunicorn, 1 worker) started with
an empty data dir until /healthz and /readyz answer, three ways: BM25 stored in Chroma (the
default), not stored (rebuilt), and a second start on the same data dir (cached). Loopback only;
run by hand, never in CI. Writes stateless.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import ROOT, free_port, start_server, wait_until_up  # noqa: E402
from synth import generate  # noqa: E402

from qa_service.config import load_settings  # noqa: E402
from qa_service.corpus.reading import load_corpus  # noqa: E402
from qa_service.store.embeddings import MiniLMEmbedding  # noqa: E402
from qa_service.store.index import Index  # noqa: E402
from qa_service.store.lexical import LexicalIndex  # noqa: E402
from qa_service.store.versions import Pair  # noqa: E402

CHROMA = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")


class RandomVectors(MiniLMEmbedding):
    """MiniLM's name and id, random unit vectors by text hash: for filling a store fast, never for answers."""

    def __call__(self, input):  # noqa: A002 - chromadb's signature
        out = []
        for text in input:
            rng = np.random.default_rng(int(hashlib.sha256(text.encode()).hexdigest()[:8], 16))
            vector = rng.standard_normal(384).astype(np.float32)
            out.append(vector / np.linalg.norm(vector))
        return out


def timed(function):
    started = time.perf_counter()
    result = function()
    return result, round(time.perf_counter() - started, 2)


def fresh_start(settings, data_dir: str) -> dict:
    """`qa-service serve` with QA_DATA_DIR as given: seconds to /healthz (worker warm: BM25 and model) and /readyz."""
    env = {"QA_CHROMA_URL": settings.chroma_url, "QA_COLLECTION": settings.collection, "QA_CONFIG": str(ROOT / "config" / "default.toml")}
    process, url, healthz = start_server(data_dir, env)
    try:
        started = time.perf_counter()
        wait_until_up(url, "/readyz", process)
        ready = healthz + time.perf_counter() - started
        papers = requests.get(url + "/readyz", timeout=30).json()["papers"]
    finally:
        process.terminate()
        process.wait(timeout=60)
    return {"healthz_s": round(healthz, 2), "readyz_s": round(ready, 2), "papers": papers}


def measure(n: int, real: bool, work: Path) -> dict:
    folder = work / f"n{n}"
    papers_path = folder / "papers.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    papers_path.write_text("".join(json.dumps(p) + "\n" for p in generate(n)[0]), encoding="utf-8")
    port = free_port()
    server = subprocess.Popen([CHROMA, "run", "--path", str(folder / "chroma"), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, "/api/v2/heartbeat", server)
        settings = load_settings(ROOT / "config" / "default.toml", env={}, data_dir=str(folder / "ingest"), chroma_url=url,
                                 collection="bench")
        corpus = load_corpus([papers_path])
        embedder = None if real else RandomVectors(batch_size=64)
        summary, ingest_s = timed(lambda: Index(settings, embedder=embedder).ingest(corpus))
        result: dict = {"papers": n, "chunks": summary.chunks, "vectors": "MiniLM" if real else "random", "ingest_s": ingest_s}

        reader = Index(settings.replace(data_dir=str(folder / "reader")), embedder=embedder)
        version = reader.manifest().version
        pair = Pair(reader.chunks, reader.papers)
        _, result["rebuild_from_chroma_s"] = timed(lambda: pair.build_lexical(version, settings.name_max_papers))
        stored, result["fetch_from_chroma_s"] = timed(lambda: reader.versions.blobs.get(f"bm25:{version}"))
        result["stored_mb"] = round(len(stored) / 1e6, 1)
        cache = folder / "unpacked.bm25"
        _, result["unpack_and_load_s"] = timed(lambda: LexicalIndex.from_bytes(stored, cache))
        _, result["load_files_s"] = timed(lambda: LexicalIndex.load(cache))  # today's start: BM25 files on disk

        result["serve_fresh_stored"] = fresh_start(settings, str(folder / "app-a"))
        result["serve_again_cached"] = fresh_start(settings, str(folder / "app-a"))
        reader.versions.blobs.meta.delete(where={"blob": f"bm25:{version}"})
        result["serve_fresh_rebuilt"] = fresh_start(settings, str(folder / "app-b"))
        reader.versions.blobs.put(f"bm25:{version}", version, stored)
        return result
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--real-up-to", type=int, default=2000, help="Largest size embedded with the real model.")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="qa-stateless-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            result = measure(n, n <= args.real_up_to, Path(tmp))
            print(json.dumps(result), flush=True)
            results.append(result)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "stateless.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
