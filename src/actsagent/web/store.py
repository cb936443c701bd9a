"""Conversations on disk (one SQLite file), so a restart of the server loses nothing.

Every event of every turn is kept: the page rebuilds a conversation by replaying them, with
the same code that draws a live answer. One turn at a time per conversation is the store's rule,
not the caller's: a unique index allows one ``running`` turn per conversation, so concurrent
requests (and processes sharing the file) cannot both start one.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from actsagent.config import home_dir
from actsagent.web.models import Conversation, ConversationSummary, Turn, TurnKind, TurnStatus, WebEvent

_ONE_RUNNING = "turns_one_running"
_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS conversations (
        id TEXT PRIMARY KEY, title TEXT NOT NULL, database TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL, updated_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS turns (
        id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL, kind TEXT NOT NULL, question TEXT NOT NULL DEFAULT '', sql TEXT,
        status TEXT NOT NULL, thread_id TEXT, final_sql TEXT, answer TEXT, created_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS turns_conv ON turns(conversation_id, idx)",
    """CREATE TABLE IF NOT EXISTS events (
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (turn_id, seq))""",
    f"CREATE UNIQUE INDEX IF NOT EXISTS {_ONE_RUNNING} ON turns(conversation_id) WHERE status = 'running'",
]

_TURN_COLS = "id, conversation_id, idx, kind, question, sql, status, thread_id, final_sql, answer, created_at"


def default_store_path() -> Path:
    return home_dir() / "copilot.sqlite"


class ConversationBusy(Exception):
    """A turn of this conversation is running: another one may not start until it ends."""

    def __init__(self) -> None:
        super().__init__("An answer is still being worked out in this conversation.")


def _busy(e: sqlite3.IntegrityError) -> bool:
    return "turns.conversation_id" in str(e)


class ConversationStore:
    """Thread-safe: the server's request handlers and agent workers share one connection."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses nothing committed, no fsync per event
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA busy_timeout=5000")
        with self._lock:
            fresh = not self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (_ONE_RUNNING,)).fetchone()
            for stmt in _SCHEMA[:-1]:
                self._conn.execute(stmt)
            if fresh:  # a file from before the index may hold two running turns of one conversation
                self.mark_interrupted()
            self._conn.execute(_SCHEMA[-1])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A transaction holding SQLite's write lock from its first read, so a check and the write it guards
        see the same data even when another process writes to the file (and a busy file is waited for)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # conversations -------------------------------------------------------------------------
    def create_conversation(self, title: str, database: str = "") -> ConversationSummary:
        now = time.time()
        cid = uuid.uuid4().hex[:12]
        with self._lock:
            self._conn.execute("INSERT INTO conversations VALUES (?, ?, ?, ?, ?)", (cid, title, database, now, now))
        return ConversationSummary(id=cid, title=title, database=database, created_at=now, updated_at=now)

    def list_conversations(self, limit: int = 200) -> list[ConversationSummary]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT c.id, c.title, c.database, c.created_at, c.updated_at, "
                "(SELECT count(*) FROM turns t WHERE t.conversation_id = c.id) "
                "FROM conversations c ORDER BY c.updated_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            ConversationSummary(id=r[0], title=r[1], database=r[2], created_at=r[3], updated_at=r[4], turns=r[5])
            for r in rows
        ]

    def get_conversation(self, cid: str, *, with_events: bool = True) -> Conversation | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT id, title, database, created_at, updated_at FROM conversations WHERE id = ?", (cid,)
            ).fetchone()
            if row is None:
                return None
            trows = self._conn.execute(
                f"SELECT {_TURN_COLS} FROM turns WHERE conversation_id = ? ORDER BY idx", (cid,)
            ).fetchall()
        turns = [self._turn(r) for r in trows]
        if with_events:
            for t in turns:
                t.events = self.events(t.id)
        return Conversation(
            id=row[0],
            title=row[1],
            database=row[2],
            created_at=row[3],
            updated_at=row[4],
            turns=len(turns),
            turn_list=turns,
        )

    def rename_conversation(self, cid: str, title: str) -> None:
        with self._lock:
            self._conn.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, cid))

    def delete_conversation(self, cid: str) -> bool:
        """Delete a conversation with its turns; False if there is none. Raises ``ConversationBusy``
        while one of its turns runs (checked in the transaction that deletes)."""
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM turns WHERE conversation_id = ? AND status = 'running'", (cid,)).fetchone():
                raise ConversationBusy()
            return conn.execute("DELETE FROM conversations WHERE id = ?", (cid,)).rowcount > 0

    # turns ----------------------------------------------------------------------------------
    def add_turn(self, cid: str, kind: TurnKind, *, question: str = "", sql: str | None = None) -> Turn:
        """Start a turn (status ``running``) at the end of a conversation, in one transaction: raises
        ``ConversationBusy`` while another turn of it runs, ``KeyError`` if there is no conversation ``cid``."""
        tid = uuid.uuid4().hex[:12]
        now = time.time()
        with self._write() as conn:
            try:
                row = conn.execute(
                    f"INSERT INTO turns ({_TURN_COLS}) SELECT ?, c.id, (SELECT coalesce(max(idx), -1) + 1 FROM turns "
                    "WHERE conversation_id = c.id), ?, ?, ?, 'running', ?, NULL, NULL, ? FROM conversations c "
                    "WHERE c.id = ? RETURNING idx",
                    (tid, kind, question, sql, f"copilot-{tid}", now, cid),
                ).fetchall()
            except sqlite3.IntegrityError as e:
                if _busy(e):
                    raise ConversationBusy() from None
                raise
            if not row:
                raise KeyError(cid)
            conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, cid))
        return Turn(
            id=tid,
            conversation_id=cid,
            index=row[0][0],
            kind=kind,
            question=question,
            sql=sql,
            status="running",
            thread_id=f"copilot-{tid}",
            created_at=now,
        )

    def claim_turn(self, tid: str, *, waiting: TurnStatus = "awaiting_clarification") -> bool:
        """Set a turn that is ``waiting`` back to ``running``, atomically: False if it was not waiting
        (or another request claimed it first); ``ConversationBusy`` if another turn of its conversation runs."""
        with self._write() as conn:
            try:
                cur = conn.execute("UPDATE turns SET status = 'running' WHERE id = ? AND status = ?", (tid, waiting))
            except sqlite3.IntegrityError as e:
                if _busy(e):
                    raise ConversationBusy() from None
                raise
        return cur.rowcount > 0

    def end_if_running(self, tid: str, status: TurnStatus = "failed") -> bool:
        """A worker that stopped without recording the turn's end must not leave its conversation locked."""
        with self._lock:
            cur = self._conn.execute("UPDATE turns SET status = ? WHERE id = ? AND status = 'running'", (status, tid))
        return cur.rowcount > 0

    def get_turn(self, tid: str, *, with_events: bool = False) -> Turn | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_TURN_COLS} FROM turns WHERE id = ?", (tid,)).fetchone()
        if row is None:
            return None
        turn = self._turn(row)
        if with_events:
            turn.events = self.events(tid)
        return turn

    def update_turn(
        self, tid: str, *, status: TurnStatus | None = None, final_sql: str | None = None, answer: str | None = None
    ) -> None:
        sets, args = [], []
        for col, val in (("status", status), ("final_sql", final_sql), ("answer", answer)):
            if val is not None:
                sets.append(f"{col} = ?")
                args.append(val)
        if not sets:
            return
        with self._lock:
            self._conn.execute(f"UPDATE turns SET {', '.join(sets)} WHERE id = ?", (*args, tid))

    def previous_turns(self, cid: str, before_idx: int, limit: int = 3) -> list[Turn]:
        """The last finished turns before ``before_idx``: the context a follow-up question carries."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_TURN_COLS} FROM turns WHERE conversation_id = ? AND idx < ? AND status = 'done' "
                "ORDER BY idx DESC LIMIT ?",
                (cid, before_idx, limit),
            ).fetchall()
        return [self._turn(r) for r in reversed(rows)]

    def mark_interrupted(self) -> int:
        """Turns left running by a previous process cannot continue: say so instead of spinning forever."""
        with self._lock:
            rows = self._conn.execute("SELECT id FROM turns WHERE status = 'running'").fetchall()
        for (tid,) in rows:
            self.append_event(
                WebEvent(
                    turn_id=tid,
                    seq=self.next_seq(tid),
                    type="error",
                    message="The server stopped while this answer was being worked out. Ask again to rerun it.",
                )
            )
            self.append_event(
                WebEvent(turn_id=tid, seq=self.next_seq(tid), type="done", data={"status": "interrupted"})
            )
            self.update_turn(tid, status="interrupted")
        return len(rows)

    # events ---------------------------------------------------------------------------------
    def next_seq(self, tid: str) -> int:
        with self._lock:
            (seq,) = self._conn.execute(
                "SELECT coalesce(max(seq), 0) + 1 FROM events WHERE turn_id = ?", (tid,)
            ).fetchone()
        return int(seq)

    def append_event(self, event: WebEvent) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO events VALUES (?, ?, ?)", (event.turn_id, event.seq, event.model_dump_json())
            )

    def events(self, tid: str, after: int = 0) -> list[WebEvent]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT body FROM events WHERE turn_id = ? AND seq > ? ORDER BY seq", (tid, after)
            ).fetchall()
        return [WebEvent.model_validate_json(r[0]) for r in rows]

    @staticmethod
    def _turn(r: tuple) -> Turn:
        return Turn(
            id=r[0],
            conversation_id=r[1],
            index=r[2],
            kind=r[3],
            question=r[4],
            sql=r[5],
            status=r[6],
            thread_id=r[7],
            final_sql=r[8],
            answer=r[9],
            created_at=r[10],
        )
