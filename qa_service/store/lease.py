"""One writer at a time across machines: a lease held in the Chroma server itself.

Chroma has no compare-and-set on records (`add` of an id that exists is silently ignored, and
`update` and `modify` take no condition). It has two atomic operations on names: creating a
collection, and renaming one, each fail when the name is taken (a UNIQUE column in Chroma's own
database: of 8 clients creating one name at once, exactly one succeeded, 20 races of 20, on
`chroma run` 1.5.9). A rename addresses a collection by its id, never by its name.

- Take: create the collection `<collection>_writer`; its metadata names the holder.
- Hold: every third of `lease` seconds the holder checks that the name still leads to its own
  collection and bumps a counter (`beat`) in its metadata.
- Take over: a waiter that sees the same (id, beat) for a whole `lease`, timed on its own
  monotonic clock (no clocks are compared across machines), takes the holder for dead. It renames
  that collection, by id, to a tombstone name of its own and deletes it, then creates the lock
  again, where again only one succeeds. Two waiters breaking the same lock at once both rename
  the same dead collection; neither can touch a lock taken since, which has another id.
- Release: rename our own collection (by id) away and delete it, so that a lock taken over by
  another writer is never deleted by the one who lost it.

What it guarantees: one holder at a time as long as a holder that is alive beats at least once
per lease. A holder stalled longer than that (suspended, or cut from the Chroma server) loses
the lock: it finds out at its next check (`verify`, before each batch it writes and before it
switches the corpus version) and stops with StoreBusy. What it cannot prevent, with no fencing
in Chroma, is the one write that such a holder had already started when it was taken over.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from chromadb.errors import IDAlreadyExistsError, NotFoundError, UniqueConstraintError

from ..errors import StoreBusy
from ..records import WriterStatus
from .locking import wait_for_writer

log = logging.getLogger(__name__)

POLL_SECONDS = 0.2


def _taken(exc: BaseException) -> bool:
    """Chroma's 'that name is taken' (its error class differs between create and rename)."""
    text = str(exc).lower()
    return isinstance(exc, (UniqueConstraintError, IDAlreadyExistsError)) or "already exists" in text or "unique constraint" in text


def _gone(exc: BaseException) -> bool:
    return isinstance(exc, NotFoundError) or "does not exist" in str(exc).lower()


class ChromaLease:
    """The writer lock of one collection prefix on a Chroma server (see the module's docstring)."""

    def __init__(self, client: Any, prefix: str, lease: float, where: str,
                 failed: Callable[[Exception], Exception] = lambda exc: exc):
        self.client = client
        self.failed = failed  # a Chroma call's own failure, as the caller reports it (store.store_error)
        self.name = f"{prefix}_writer"
        self.lease = max(0.5, lease)
        self.where = where  # for messages: which server and collection
        self._mine: Any = None  # our lock collection while we hold it
        self._meta: dict = {}
        self._depth = 0  # re-entry by the holder (ingest inside check --repair)
        self._lost = threading.Event()
        self._stop = threading.Event()
        self._beating: threading.Thread | None = None
        self._guard = threading.Lock()

    # -- taking and giving back ----------------------------------------------------
    @contextmanager
    def held(self, wait: float, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """The lock for the whole block; a second writer waits up to `wait` seconds, then StoreBusy."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.acquire(wait, on_wait)
        try:
            yield
        finally:
            self.release()

    def acquire(self, wait: float, on_wait: Callable[[str], None] | None = None, take_over: bool = True) -> None:
        try:
            self._acquire(wait, on_wait, take_over)
        except StoreBusy:
            raise
        except Exception as exc:  # noqa: BLE001 - the server failed our own calls
            raise self.failed(exc) from exc

    def _acquire(self, wait: float, on_wait: Callable[[str], None] | None, take_over: bool) -> None:
        seen: tuple[str, Any] | None = None
        seen_at = time.monotonic()

        def attempt() -> str | None:
            """Take the lock (None), breaking a holder that has not beaten for a whole lease; else its owner."""
            nonlocal seen, seen_at
            while True:
                if self._create():
                    return None
                holder = self._holder()
                if holder is not None:
                    key = (str(holder.id), (holder.metadata or {}).get("beat"))
                    if key != seen:
                        seen, seen_at = key, time.monotonic()
                    elif take_over and time.monotonic() - seen_at >= self.lease:
                        self._break(holder)
                        continue
                return ((holder.metadata or {}).get("owner") if holder is not None else "") or "another process"

        wait_for_writer(attempt, self.where, wait, on_wait, POLL_SECONDS)

    def _create(self) -> bool:
        meta = {"owner": f"{socket.gethostname()} pid {os.getpid()} since {time.strftime('%H:%M:%S')}",
                "token": uuid.uuid4().hex, "beat": 0, "since": time.time()}
        try:
            mine = self.client.create_collection(self.name, metadata=meta, embedding_function=None)
        except Exception as exc:  # noqa: BLE001 - 'taken' is the expected answer; anything else is the caller's
            if _taken(exc):
                return False
            raise
        self._mine, self._meta, self._depth = mine, meta, 1
        self._lost.clear()
        self._stop.clear()
        self._beating = threading.Thread(target=self._beat, name="writer-lease", daemon=True)
        self._beating.start()
        return True

    def _holder(self) -> Any:
        try:
            return self.client.get_collection(self.name, embedding_function=None)
        except Exception as exc:  # noqa: BLE001
            if _gone(exc):
                return None  # released between our create and this look: try again at once
            raise

    def _break(self, holder: Any) -> None:
        """The holder stopped beating a whole lease ago: move its lock (by id) out of the way."""
        tomb = f"{self.name}-stale-{uuid.uuid4().hex[:12]}"
        try:
            holder.modify(name=tomb)
        except Exception as exc:  # noqa: BLE001
            if _gone(exc) or _taken(exc) or self._moved(holder):
                return  # another waiter broke it first (mid-delete, Chroma says 'Missing metadata segment')
            raise
        log.warning("took over the writer lock of %s on %s: no heartbeat for %.0f s",
                    (holder.metadata or {}).get("owner", "a writer"), self.where, self.lease)
        self._delete(tomb)

    def _moved(self, holder: Any) -> bool:
        """The lock's name no longer leads to this holder's collection: someone else moved it."""
        now = self._holder()
        return now is None or str(now.id) != str(holder.id)

    def release(self) -> None:
        if not self._depth:
            return
        self._depth = 0
        self._stop.set()
        if self._beating is not None:
            self._beating.join(timeout=self.lease)
        mine, self._mine = self._mine, None
        if mine is None:
            return
        tomb = f"{self.name}-done-{uuid.uuid4().hex[:12]}"
        try:
            mine.modify(name=tomb)  # by id: if our lock was taken over, this moves only our dead one
        except Exception as exc:  # noqa: BLE001 - gone already, or the server is down: a waiter takes over after a lease
            log.warning("could not release the writer lock on %s (%s); the next writer takes it over after %.0f s",
                        self.where, type(exc).__name__, self.lease)
            return
        self._delete(tomb)

    def _delete(self, name: str) -> None:
        try:
            self.client.delete_collection(name)
        except Exception as exc:  # noqa: BLE001 - someone else deleted it: that is all we wanted
            if not _gone(exc):
                log.warning("could not delete %s on %s: %s", name, self.where, type(exc).__name__)

    # -- while held ----------------------------------------------------------------
    def _beat(self) -> None:
        beat = 0
        last_ok = time.monotonic()
        while not self._stop.wait(self.lease / 3):
            try:
                if not self._still_mine():
                    self._lost.set()
                    return
                beat += 1
                self._meta = {**self._meta, "beat": beat}
                self._mine.modify(metadata=self._meta)
                last_ok = time.monotonic()
            except Exception as exc:  # noqa: BLE001 - a blip: keep trying until a whole lease went by
                log.warning("writer lock heartbeat on %s failed: %s", self.where, type(exc).__name__)
                if time.monotonic() - last_ok > self.lease:
                    self._lost.set()
                    return

    def _still_mine(self) -> bool:
        mine = self._mine
        holder = self._holder()
        return mine is not None and holder is not None and str(holder.id) == str(mine.id)

    def verify(self) -> None:
        """Stop (StoreBusy) when the lock was taken over: checked before each write and before the switch."""
        if not self._depth:
            return
        with self._guard:
            try:
                lost = self._lost.is_set() or not self._still_mine()
            except Exception as exc:  # noqa: BLE001 - cannot tell: the server is away, so stop writing too
                raise self.failed(exc) from exc
            if lost:
                self._lost.set()
                raise StoreBusy(
                    f"this writer lost the writer lock on {self.where} (no heartbeat reached the server for "
                    f"{self.lease:g} s, and another writer took over); nothing was switched: run the ingest again"
                )

    def holds(self) -> bool:
        return bool(self._depth)

    def status(self) -> WriterStatus:
        """Who holds the lock now, as the server says (one call)."""
        try:
            holder = self._holder()
        except Exception as exc:  # noqa: BLE001
            raise self.failed(exc) from exc
        if holder is None:
            return WriterStatus()
        meta = holder.metadata or {}
        return WriterStatus(True, str(meta.get("owner", "")), float(meta["since"]) if "since" in meta else None)
