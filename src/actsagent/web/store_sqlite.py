"""Conversations in one SQLite file (the single-user default), so a restart of the server loses nothing.

One connection serves every thread of the server; processes sharing the file serialise their writes
with SQLite's write lock (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from actsagent.errors import UserError
from actsagent.web.store import DEFAULT_LEASE_S, ONE_RUNNING, ConversationStore, StoreTarget, default_store_path

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS conversations (
        id TEXT PRIMARY KEY, title TEXT NOT NULL, database TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL, updated_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS turns (
        id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL, kind TEXT NOT NULL, question TEXT NOT NULL DEFAULT '', sql TEXT,
        status TEXT NOT NULL, thread_id TEXT, final_sql TEXT, answer TEXT, created_at REAL NOT NULL, owner TEXT)""",
    "CREATE INDEX IF NOT EXISTS turns_conv ON turns(conversation_id, idx)",
    """CREATE TABLE IF NOT EXISTS events (
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (turn_id, seq))""",
    "CREATE TABLE IF NOT EXISTS replicas (id TEXT PRIMARY KEY, seen_at REAL NOT NULL)",
]
_ONE_RUNNING_INDEX = (
    f"CREATE UNIQUE INDEX IF NOT EXISTS {ONE_RUNNING} ON turns(conversation_id) WHERE status = 'running'"
)


class _Conn:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, args).fetchall()

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, args).rowcount


class SqliteStore(ConversationStore):
    NOW = "((julianday('now') - 2440587.5) * 86400.0)"

    def __init__(self, path: str | Path | None = None, *, lease_s: float = DEFAULT_LEASE_S) -> None:
        super().__init__(lease_s=lease_s)
        self.path = Path(path) if path else default_store_path()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
        except (OSError, sqlite3.Error) as e:
            raise UserError(f"cannot open the conversation store {self.path}: {e}") from None
        self._conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses nothing committed, no fsync per event
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA busy_timeout=5000")
        with self._lock:
            fresh = not self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (ONE_RUNNING,)).fetchone()
            for stmt in _SCHEMA:
                self._conn.execute(stmt)
            if not any(r[1] == "owner" for r in self._conn.execute("PRAGMA table_info(turns)")):
                self._conn.execute("ALTER TABLE turns ADD COLUMN owner TEXT")  # a file from before replicas
            self.beat()
            if fresh:  # a file from before the index may hold two running turns of one conversation
                self.mark_interrupted()
            self._conn.execute(_ONE_RUNNING_INDEX)

    def recover(self) -> int:
        """A SQLite file serves one server: whatever was running when it last stopped stopped with it
        (at once, without waiting for a lease to run out)."""
        return self.mark_interrupted(all_others=True)

    @property
    def target(self) -> StoreTarget:
        return StoreTarget(kind="sqlite", path=self.path)

    @contextmanager
    def session(self) -> Iterator[_Conn]:
        with self._lock:
            yield _Conn(self._conn)

    @contextmanager
    def transaction(self) -> Iterator[_Conn]:
        """SQLite's write lock from the first read, so a check and the write it guards see the same data even
        when another process writes to the file (and a busy file is waited for)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _Conn(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def lock_conversation(self, s: Any, cid: str) -> None:
        """Nothing to do: a transaction here holds the file's write lock from its start."""

    def is_busy(self, e: Exception) -> bool:
        return isinstance(e, sqlite3.IntegrityError) and "turns.conversation_id" in str(e)

    def _close(self) -> None:
        with self._lock:
            self._conn.close()
