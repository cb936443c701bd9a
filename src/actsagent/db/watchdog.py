"""Cancel a running PostgreSQL statement from outside the thread that waits for it.

Two bounds the server cannot keep alone: the deadline also covers the transfer (a result that is
slow to arrive is cut at the same timeout), and on the embedded server, whose backends are local
processes, a backend holding more private memory than the limit is cancelled (work_mem bounds
sorts and hashes, not an aggregate such as string_agg building a 1 GB value). One daemon thread
polls every running statement; it sleeps while none runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import psycopg

log = logging.getLogger("actsagent.db")
POLL_S = 0.05


@dataclass(eq=False)
class Watch:
    """One running statement: what to watch, and why it was cancelled (``reason``) if it was."""

    conn: Any
    deadline: float  # time.monotonic()
    memory_limit: int | None = None  # bytes of private memory of the backend
    backend: int | None = None  # pid, only when verified to be a child of the local postmaster
    reason: Literal["timeout", "memory"] | None = None
    peak_memory: int = 0
    _done: bool = field(default=False, repr=False)


class Watchdog:
    def __init__(self) -> None:
        self._watches: set[Watch] = set()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watch(
        self, conn: Any, timeout_s: float, *, memory_limit: int | None = None, postmaster: int | None = None
    ) -> Iterator[Watch]:
        backend = conn.info.backend_pid if postmaster and memory_limit else None
        if backend is not None and _parent(backend) != postmaster:
            backend = None  # not our embedded server's process: never read or judge it
        w = Watch(conn=conn, deadline=time.monotonic() + timeout_s, memory_limit=memory_limit, backend=backend)
        with self._cond:
            self._watches.add(w)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="actsagent-db-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            yield w
        finally:
            with self._cond:
                w._done = True
                self._watches.discard(w)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._watches:
                    self._cond.wait()
                watches = list(self._watches)
            now = time.monotonic()
            for w in watches:
                if w.reason is not None:
                    continue
                if now >= w.deadline:
                    self._cancel(w, "timeout")
                elif w.backend is not None and w.memory_limit is not None:
                    used = private_memory(w.backend)
                    w.peak_memory = max(w.peak_memory, used)
                    if used > w.memory_limit:
                        self._cancel(w, "memory")
            time.sleep(POLL_S)

    def _cancel(self, w: Watch, reason: Literal["timeout", "memory"]) -> None:
        # under the lock: the statement's watch cannot end (and its connection go back to the pool) while
        # the cancel request is in flight, so a late cancel never hits the next statement on that connection
        with self._cond:
            if w._done:
                return
            w.reason = reason
            try:
                w.conn.cancel_safe(timeout=2.0)
            except psycopg.Error as e:  # the connection may be closing at the same moment: nothing left to stop
                log.debug("cancel failed: %s", e)


def private_memory(pid: int) -> int:
    """Bytes of private (anonymous) resident memory of a local process; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


WATCHDOG = Watchdog()
