"""One writer at a time, and no reader while it writes: fcntl.flock on files in the data dir.

A flock belongs to an open file and dies with its process, so a killed ingest never
leaves the data dir locked. Three files:
- `.writer.lock`: held by a writer (ingest, check --repair) for its whole run, so that
  two writers never interleave. It names its holder, for the message a second one prints.
- `.gate.lock`: held exclusively while a writer changes the store; a reader that finds
  it taken answers "busy" at once instead of reading half-written data.
- `.readers.lock`: shared by every request reading the store, exclusive for the writer,
  who waits for the requests in flight. It holds the store's generation, which changes
  with every write, so that a reader knows to reopen its (cached) store.
Readers check the gate before joining the readers, so a stream of requests never starves
a writer.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..errors import StoreBusy
from ..records import WriterStatus

WRITER, GATE, READERS = ".writer.lock", ".gate.lock", ".readers.lock"
POLL_SECONDS = 0.1


class StoreLocks:
    """The locks of one data dir. `readers=False` (a Chroma server) keeps only the writer lock."""

    def __init__(self, folder: Path, readers: bool = True):
        self.folder = folder
        self.readers = readers
        self._held = threading.local()  # re-entry by the same thread (ingest inside check --repair)

    # -- writers -------------------------------------------------------------------
    @contextmanager
    def writer(self, wait: float, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Exclusive among writers for the whole run; waits up to `wait` seconds, then StoreBusy."""
        if getattr(self._held, "writer", 0):
            self._held.writer += 1
            try:
                yield
            finally:
                self._held.writer -= 1
            return
        fd = self._open(WRITER, create=True)
        try:
            self._acquire_writer(fd, wait, on_wait)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}".encode(), 0)
            self._held.writer = 1
            try:
                yield
            finally:
                self._held.writer = 0
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing releases the flock

    def _acquire_writer(self, fd: int, wait: float, on_wait: Callable[[str], None] | None) -> None:
        def attempt() -> str | None:
            if _try_lock(fd, fcntl.LOCK_EX):
                return None
            return os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"

        wait_for_writer(attempt, self.folder, wait, on_wait, POLL_SECONDS)

    def writer_status(self) -> WriterStatus:
        """Is the writer lock held now, and by whom (for /metrics)? A shared probe, let go at once."""
        try:
            fd = self._open(WRITER, create=False)
        except OSError:
            return WriterStatus()
        try:
            if getattr(self._held, "writer", 0) or not _try_lock(fd, fcntl.LOCK_SH):
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
                return WriterStatus(True, holder, os.fstat(fd).st_mtime)
            return WriterStatus()
        finally:
            os.close(fd)  # closing releases the probe

    def holds_writer(self) -> bool:
        return bool(getattr(self._held, "writer", 0))

    @contextmanager
    def try_writer(self) -> Iterator[bool]:
        """The writer lock if it is free now (True), else nothing (False): for optional cache writes."""
        if self.holds_writer():
            yield True
            return
        with ExitStack() as stack:
            try:
                stack.enter_context(self.writer(0.0))
                got = True
            except (StoreBusy, OSError):  # busy, or a read-only data dir: the cache stays in memory
                got = False
            yield got

    @contextmanager
    def writing(self) -> Iterator[None]:
        """While the store changes: new readers are turned away, readers in flight are waited for.

        The generation changes when writing starts and again when it ends, so a reader that
        opened the store at any point before the end reopens it."""
        if not self.readers or getattr(self._held, "writing", False):
            yield
            return
        gate = self._open(GATE, create=True)
        readers = self._open(READERS, create=True)
        try:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(readers, fcntl.LOCK_EX)
            _stamp(readers)
            self._held.writing = True
            try:
                yield
            finally:
                self._held.writing = False
                _stamp(readers)
        finally:
            os.close(readers)
            os.close(gate)

    # -- readers -------------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[str | None]:
        """Around one request that reads the store: the generation, or StoreBusy while a writer writes.

        Yields None when there is nothing to lock (a Chroma server, or no data dir yet)."""
        if not self.readers or getattr(self._held, "writing", False):
            yield None
            return
        try:
            gate = self._open(GATE, create=False)
        except OSError:  # no data dir (or no lock file) yet: nobody has written, nothing to guard
            yield None
            return
        try:
            readers = self._open(READERS, create=False)
        except OSError:
            os.close(gate)
            yield None
            return
        try:
            if not _try_lock(gate, fcntl.LOCK_SH) or not _try_lock(readers, fcntl.LOCK_SH):
                raise StoreBusy(f"an ingest is writing to {self.folder}; answers resume when it has finished (retry in a few seconds)")
            fcntl.flock(gate, fcntl.LOCK_UN)  # let a writer queue at the gate; it still waits for us below
            yield _read_stamp(readers)
        finally:
            os.close(readers)
            os.close(gate)

    def generation(self) -> str | None:
        """The store's generation now (no lock taken: for a writer, or at open)."""
        if not self.readers:
            return None
        try:
            fd = self._open(READERS, create=False)
        except OSError:
            return None
        try:
            return _read_stamp(fd)
        finally:
            os.close(fd)

    def _open(self, name: str, create: bool) -> int:
        path = self.folder / name
        if create:
            self.folder.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        return os.open(path, os.O_RDWR)


def wait_for_writer(attempt: Callable[[], str | None], where: object, wait: float,
                    on_wait: Callable[[str], None] | None, poll: float) -> None:
    """Retry `attempt` (None: taken; else who holds it) until `wait` runs out, then StoreBusy:
    one loop for the file lock and the Chroma lease, so their waits and messages cannot drift apart."""
    deadline = time.monotonic() + max(0.0, wait)
    told = False
    while (holder := attempt()) is not None:
        if time.monotonic() >= deadline:
            raise StoreBusy(
                f"another writer ({holder}) is changing {where}; try again when it has finished "
                f"(waited {wait:g} s; QA_WRITER_WAIT sets how long)"
            )
        if on_wait and not told:
            on_wait(f"waiting up to {wait:g} s for another writer ({holder}) to finish with {where}")
            told = True
        time.sleep(poll)


def _try_lock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise


def _stamp(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, uuid.uuid4().hex.encode(), 0)


def _read_stamp(fd: int) -> str:
    return os.pread(fd, 64, 0).decode("ascii", "replace")
