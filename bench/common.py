"""Helpers the benchmarks share: a production server on loopback (tests/serverkit.py, shared with the tests), RSS,
percentiles."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serverkit import free_port, start_server, wait_until_up  # noqa: E402

__all__ = ["ROOT", "free_port", "percentile", "start_server", "tree_rss_mb", "wait_until_up"]


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (gunicorn master + worker), in MB."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0
