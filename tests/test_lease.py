"""The writer lease in a real `chroma run` server: one holder, a dead one taken over, a live one never."""

from __future__ import annotations

import threading
import time

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from qa_service.errors import StoreBusy
from qa_service.store.lease import ChromaLease
from tests.test_chroma_server import chroma_url  # noqa: F401 - the module's `chroma run` server

pytestmark = pytest.mark.slow  # a real `chroma run` server


def client(url: str):
    host, port = url.rsplit(":", 1)
    return chromadb.HttpClient(host=host.split("//")[1], port=int(port), settings=ChromaSettings(anonymized_telemetry=False))


def lease(url: str, prefix: str, seconds: float = 30.0) -> ChromaLease:
    return ChromaLease(client(url), prefix, seconds, f"test server ({prefix})")


def test_a_second_writer_is_refused_naming_the_first(chroma_url):  # noqa: F811
    first, second = lease(chroma_url, "one"), lease(chroma_url, "one")
    with first.held(0):
        with pytest.raises(StoreBusy, match=r"another writer \(.* pid \d+ since .*\) is changing test server"):
            second.acquire(0)
        assert second.status().held and "pid" in second.status().holder
    assert not second.status().held
    with second.held(0):  # released: free for the next
        assert first.status().held


def test_a_live_holder_keeps_the_lock_past_its_lease(chroma_url):  # noqa: F811
    """The holder beats every third of a lease: a waiter waiting three leases never takes over."""
    holder, waiter = lease(chroma_url, "live", 1.0), lease(chroma_url, "live", 1.0)
    with holder.held(0):
        with pytest.raises(StoreBusy):
            waiter.acquire(3.0)
        holder.verify()  # still ours


def test_a_dead_holders_lock_is_taken_over_after_one_lease_by_exactly_one_waiter(chroma_url, caplog):  # noqa: F811
    """A lock left by a killed writer (its collection, no heartbeat): of six waiters, one takes it."""
    client(chroma_url).create_collection("dead_writer", metadata={"owner": "a killed ingest", "beat": 3}, embedding_function=None)
    waiters = [lease(chroma_url, "dead", 1.0) for _ in range(6)]
    won, refused = [], []

    def wait(one: ChromaLease) -> None:
        try:
            one.acquire(4.0)
            won.append(one)
        except StoreBusy:
            refused.append(one)

    threads = [threading.Thread(target=wait, args=(one,)) for one in waiters]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(refused) == 5
    assert time.monotonic() - started >= 1.0  # not before a whole lease without a heartbeat
    assert "took over the writer lock of a killed ingest" in caplog.text
    won[0].release()


def test_a_holder_taken_over_stops_and_never_releases_the_new_holders_lock(chroma_url):  # noqa: F811
    stalled = lease(chroma_url, "stall", 1.0)
    stalled.acquire(0)
    stalled._stop.set()  # its heartbeat stops, as in a process suspended for longer than the lease
    stalled._beating.join()
    successor = lease(chroma_url, "stall", 1.0)
    successor.acquire(5.0)  # takes over after a lease
    with pytest.raises(StoreBusy, match="lost the writer lock"):
        stalled.verify()
    stalled.release()
    assert successor.status().held  # the successor's lock is untouched
    successor.verify()
    successor.release()
    assert not successor.status().held


def test_a_lock_broken_by_another_waiter_mid_delete_is_no_failure(chroma_url):  # noqa: F811
    """Two waiters break one dead lock: the slower one's rename meets Chroma mid-delete, an error no
    name check knows ('Missing metadata segment'). The lock's name leads elsewhere now, so it waits on."""
    from chromadb.errors import ChromaError

    dead = client(chroma_url).create_collection("middel_writer", metadata={"owner": "dead", "beat": 1}, embedding_function=None)

    class MidDelete:  # the dead lock as the slower waiter saw it, its rename arriving mid-delete
        id, metadata = dead.id, dead.metadata

        def modify(self, name: str) -> None:
            raise ChromaError("Missing field: [Missing metadata segment]")

    slower = lease(chroma_url, "middel", 1.0)
    with pytest.raises(ChromaError):  # still the dead lock under its name: a real failure, reported
        slower._break(MidDelete())
    client(chroma_url).delete_collection("middel_writer")  # the faster waiter moved it away
    slower._break(MidDelete())  # no failure
    slower.acquire(0)
    slower.release()
