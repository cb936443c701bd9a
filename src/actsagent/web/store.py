"""Where conversations live: one interface, a SQLite file (the single-user default) or PostgreSQL (replicas).

Every event of every turn is kept: the page rebuilds a conversation by replaying them, with the same
code that draws a live answer. One turn at a time per conversation is the store's rule, not the
caller's: a unique index allows one ``running`` turn per conversation, so concurrent requests (and
processes sharing the store) cannot both start one.

A running turn belongs to the replica (one ``ConversationStore``, one server process) that runs it.
Each replica beats in the ``replicas`` table; a running turn whose owner has not beaten for the lease
(it was killed, or stopped) is marked interrupted by whichever replica sweeps first, so no turn spins
forever and a live one is never taken from its owner.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from actsagent.config import home_dir
from actsagent.db.admin import redact
from actsagent.errors import UserError
from actsagent.web.models import Conversation, ConversationSummary, Turn, TurnKind, TurnStatus, WebEvent

ONE_RUNNING = "turns_one_running"
DEFAULT_LEASE_S = 10.0  # a replica silent this long has stopped: its running turns are interrupted
PG_SCHEMA = "actsagent_copilot"  # the store's tables (and the agent's checkpoints) in a PostgreSQL database
INTERRUPTED_TEXT = "The server stopped while this answer was being worked out. Ask again to rerun it."

TURN_COLS = "id, conversation_id, idx, kind, question, sql, status, thread_id, final_sql, answer, created_at"


def default_store_path() -> Path:
    return home_dir() / "copilot.sqlite"


class ConversationBusy(Exception):
    """A turn of this conversation is running: another one may not start until it ends."""

    def __init__(self) -> None:
        super().__init__("An answer is still being worked out in this conversation.")


class StoreTarget(BaseModel, frozen=True):
    """A parsed ``--store``: a SQLite file, or a PostgreSQL database and the schema that holds the tables."""

    kind: Literal["sqlite", "postgresql"]
    path: Path | None = None
    url: str | None = None
    pg_schema: str = PG_SCHEMA

    @property
    def label(self) -> str:
        return redact(self.url) if self.url else str(self.path)

    def for_user(self, user: str) -> StoreTarget:
        """The store of one user of a multi-user copilot: a file beside this one, or a schema of its own."""
        if self.path is not None:
            return self.model_copy(
                update={"path": self.path.with_name(f"{self.path.stem}-{user}{self.path.suffix or '.sqlite'}")}
            )
        slug = re.sub(r"[^a-z0-9_]", "_", user.lower())[:30]  # distinct users never share a schema: the hash
        return self.model_copy(
            update={"pg_schema": f"{PG_SCHEMA}_{slug}_{hashlib.sha256(user.encode()).hexdigest()[:8]}"}
        )


def parse_store(value: str | Path | StoreTarget | None) -> StoreTarget:
    """``--store`` as a target: a ``postgresql://`` URL, else a SQLite file (None: the default file)."""
    if isinstance(value, StoreTarget):
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        return StoreTarget(kind="sqlite", path=default_store_path())
    text = str(value).strip()
    if text.startswith(("postgresql://", "postgres://")):
        return StoreTarget(kind="postgresql", url=text)
    if "://" in text:
        raise UserError("--store takes a SQLite file or a postgresql:// URL")
    path = Path(text).expanduser()
    if path.is_dir():
        raise UserError(f"--store {path} is a directory: give a SQLite file or a postgresql:// URL")
    return StoreTarget(kind="sqlite", path=path)


class Session(Protocol):
    """One connection of a store, inside a transaction or not; SQL uses ``?`` placeholders."""

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def run(self, sql: str, args: Sequence[Any] = ()) -> int: ...


class ConversationStore(ABC):
    """Conversations, turns and events; thread-safe (request handlers and agent workers share one store)."""

    NOW: str  # the database's clock in epoch seconds, as SQL: replicas on several machines share one clock

    def __init__(self, *, lease_s: float = DEFAULT_LEASE_S) -> None:
        self.replica = uuid.uuid4().hex[:12]  # this store's (this server's) id as the owner of its turns
        self.lease_s = lease_s
        self.closed = False

    # what each database does its own way -------------------------------------------------------
    @property
    @abstractmethod
    def target(self) -> StoreTarget: ...

    @abstractmethod
    def session(self) -> AbstractContextManager[Session]:
        """A connection whose statements commit one by one."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Session]:
        """A transaction that sees the data it checks as it writes (SQLite: its write lock from the first read)."""

    @abstractmethod
    def is_busy(self, e: Exception) -> bool:
        """Whether ``e`` is the one-running-turn index refusing a second running turn."""

    @abstractmethod
    def lock_conversation(self, s: Session, cid: str) -> None:
        """Hold the conversation's row until the transaction ends (SQLite's write lock already does)."""

    def checkpointer(self) -> Any:
        """The agent's checkpointer for runs of this store's turns; None: the agent's default (a local file)."""
        return None

    def close(self) -> None:
        """Leave: this replica's running turns cannot go on, so they are marked interrupted now."""
        if self.closed:
            return
        try:
            with self.session() as s:
                s.run("DELETE FROM replicas WHERE id = ?", (self.replica,))
            self.mark_interrupted()
        finally:
            self.closed = True
            self._close()

    @abstractmethod
    def _close(self) -> None: ...

    # replicas ---------------------------------------------------------------------------------
    def beat(self) -> None:
        """This replica is alive (its running turns are still being worked out)."""
        with self.session() as s:
            s.run(
                f"INSERT INTO replicas (id, seen_at) VALUES (?, {self.NOW}) "
                "ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at",
                (self.replica,),
            )

    def recover(self) -> int:
        """At a server's start: end the turns no live replica is working out."""
        return self.mark_interrupted()

    def mark_interrupted(self, *, all_others: bool = False) -> int:
        """Running turns whose replica has stopped (``all_others``: any replica but this one) cannot continue:
        say so instead of spinning forever. One transaction: of several replicas sweeping at once, each
        orphaned turn is ended by one of them."""
        args: tuple[str | float, ...]
        if all_others:
            orphan, args = "(owner IS NULL OR owner <> ?)", (self.replica,)
        else:
            orphan = f"(owner IS NULL OR owner NOT IN (SELECT id FROM replicas WHERE seen_at > {self.NOW} - ?))"
            args = (self.lease_s,)
        with self.transaction() as s:
            rows = s.rows(
                f"UPDATE turns SET status = 'interrupted' WHERE status = 'running' AND {orphan} RETURNING id", args
            )
            for (tid,) in rows:
                seq = self._next_seq(s, tid)
                self._append(s, WebEvent(turn_id=tid, seq=seq, type="error", message=INTERRUPTED_TEXT))
                self._append(s, WebEvent(turn_id=tid, seq=seq + 1, type="done", data={"status": "interrupted"}))
            s.run(f"DELETE FROM replicas WHERE seen_at < {self.NOW} - 86400")  # long gone
        return len(rows)

    # conversations ------------------------------------------------------------------------------
    def create_conversation(self, title: str, database: str = "") -> ConversationSummary:
        now = time.time()
        cid = uuid.uuid4().hex[:12]
        with self.session() as s:
            s.run("INSERT INTO conversations VALUES (?, ?, ?, ?, ?)", (cid, title, database, now, now))
        return ConversationSummary(id=cid, title=title, database=database, created_at=now, updated_at=now)

    def list_conversations(self, limit: int = 200) -> list[ConversationSummary]:
        with self.session() as s:
            rows = s.rows(f"{_SUMMARY_SELECT} ORDER BY c.updated_at DESC LIMIT ?", (limit,))
        return [_summary(r) for r in rows]

    def conversation_summary(self, cid: str) -> ConversationSummary | None:
        """One conversation's title and size, without reading its turns (a request that starts a turn needs no more)."""
        with self.session() as s:
            rows = s.rows(f"{_SUMMARY_SELECT} WHERE c.id = ?", (cid,))
        return _summary(rows[0]) if rows else None

    def get_conversation(self, cid: str, *, with_events: bool = True) -> Conversation | None:
        with self.session() as s:
            found = s.rows("SELECT id, title, database, created_at, updated_at FROM conversations WHERE id = ?", (cid,))
            if not found:
                return None
            trows = s.rows(f"SELECT {TURN_COLS} FROM turns WHERE conversation_id = ? ORDER BY idx", (cid,))
        row = found[0]
        turns = [_turn(r) for r in trows]
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
        with self.session() as s:
            s.run("UPDATE conversations SET title = ? WHERE id = ?", (title, cid))

    def delete_conversation(self, cid: str) -> bool:
        """Delete a conversation with its turns; False if there is none. Raises ``ConversationBusy``
        while one of its turns runs (checked in the transaction that deletes)."""
        with self.transaction() as s:
            self.lock_conversation(s, cid)
            if s.rows("SELECT 1 FROM turns WHERE conversation_id = ? AND status = 'running'", (cid,)):
                raise ConversationBusy()
            return s.run("DELETE FROM conversations WHERE id = ?", (cid,)) > 0

    # turns ----------------------------------------------------------------------------------------
    def add_turn(self, cid: str, kind: TurnKind, *, question: str = "", sql: str | None = None) -> Turn:
        """Start a turn (status ``running``, owned by this replica) at the end of a conversation, in one
        transaction: raises ``ConversationBusy`` while another turn of it runs, ``KeyError`` if there is no
        conversation ``cid``."""
        tid = uuid.uuid4().hex[:12]
        now = time.time()
        try:
            with self.transaction() as s:
                self.lock_conversation(s, cid)
                row = s.rows(
                    f"INSERT INTO turns ({TURN_COLS}, owner) SELECT ?, c.id, (SELECT coalesce(max(idx), -1) + 1 "
                    "FROM turns WHERE conversation_id = c.id), ?, ?, ?, 'running', ?, NULL, NULL, ?, ? "
                    "FROM conversations c WHERE c.id = ? RETURNING idx",
                    (tid, kind, question, sql, f"copilot-{tid}", now, self.replica, cid),
                )
                if not row:
                    raise KeyError(cid)
                s.run("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, cid))
        except Exception as e:
            if self.is_busy(e):
                raise ConversationBusy() from None
            raise
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
        """Set a turn that is ``waiting`` back to ``running`` (owned by this replica), atomically: False if it
        was not waiting (or another request claimed it first); ``ConversationBusy`` if another turn of its
        conversation runs."""
        try:
            with self.transaction() as s:
                claimed = s.run(
                    "UPDATE turns SET status = 'running', owner = ? WHERE id = ? AND status = ?",
                    (self.replica, tid, waiting),
                )
        except Exception as e:
            if self.is_busy(e):
                raise ConversationBusy() from None
            raise
        return claimed > 0

    def end_if_running(self, tid: str, status: TurnStatus = "failed") -> bool:
        """A worker that stopped without recording the turn's end must not leave its conversation locked;
        a turn already ended (by its worker, or as interrupted) keeps its status."""
        with self.session() as s:
            return s.run("UPDATE turns SET status = ? WHERE id = ? AND status = 'running'", (status, tid)) > 0

    def finish_turn(self, tid: str, status: TurnStatus, final_sql: str | None = None) -> None:
        """A turn's end as its worker recorded it, in one statement: the status (unless the turn was ended
        meanwhile, as interrupted) and the final SQL (when there is one)."""
        with self.session() as s:
            s.run(
                "UPDATE turns SET status = CASE WHEN status = 'running' THEN ? ELSE status END, "
                "final_sql = coalesce(?, final_sql) WHERE id = ?",
                (status, final_sql, tid),
            )

    def get_turn(self, tid: str, *, with_events: bool = False) -> Turn | None:
        with self.session() as s:
            rows = s.rows(f"SELECT {TURN_COLS} FROM turns WHERE id = ?", (tid,))
        if not rows:
            return None
        turn = _turn(rows[0])
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
        with self.session() as s:
            s.run(f"UPDATE turns SET {', '.join(sets)} WHERE id = ?", (*args, tid))

    def previous_turns(self, cid: str, before_idx: int, limit: int = 3) -> list[Turn]:
        """The last finished turns before ``before_idx``: the context a follow-up question carries."""
        with self.session() as s:
            rows = s.rows(
                f"SELECT {TURN_COLS} FROM turns WHERE conversation_id = ? AND idx < ? AND status = 'done' "
                "ORDER BY idx DESC LIMIT ?",
                (cid, before_idx, limit),
            )
        return [_turn(r) for r in reversed(rows)]

    # events -----------------------------------------------------------------------------------------
    def next_seq(self, tid: str) -> int:
        with self.session() as s:
            return self._next_seq(s, tid)

    def add_event(self, event: WebEvent) -> WebEvent:
        """Store a turn's next event at the seq its writer counted, in one statement; if that seq was taken
        meanwhile (a sweep ended the turn as interrupted), at the next free one. Returns the event as stored."""
        with self.session() as s:
            body = event.model_dump_json()
            if s.run("INSERT INTO events VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (event.turn_id, event.seq, body)):
                return event
            event = event.model_copy(update={"seq": self._next_seq(s, event.turn_id)})
            self._append(s, event)
        return event

    def events(self, tid: str, after: int = 0) -> list[WebEvent]:
        with self.session() as s:
            rows = s.rows("SELECT body FROM events WHERE turn_id = ? AND seq > ? ORDER BY seq", (tid, after))
        return [WebEvent.model_validate_json(r[0]) for r in rows]

    def poll(self, tid: str, after: int) -> tuple[list[WebEvent], bool] | None:
        """Events of a turn after ``after`` and whether it still runs (here or on another replica); None if there is
        no such turn. The status is read first, so a turn that stopped has stored every event it will have by the
        time they are read."""
        turn = self.get_turn(tid)
        if turn is None:
            return None
        return self.events(tid, after), turn.status == "running"

    @staticmethod
    def _next_seq(s: Session, tid: str) -> int:
        return int(s.rows("SELECT coalesce(max(seq), 0) + 1 FROM events WHERE turn_id = ?", (tid,))[0][0])

    @staticmethod
    def _append(s: Session, event: WebEvent) -> None:
        s.run("INSERT INTO events VALUES (?, ?, ?)", (event.turn_id, event.seq, event.model_dump_json()))


_SUMMARY_SELECT = (
    "SELECT c.id, c.title, c.database, c.created_at, c.updated_at, "
    "(SELECT count(*) FROM turns t WHERE t.conversation_id = c.id) FROM conversations c"
)


def _summary(r: Sequence[Any]) -> ConversationSummary:
    return ConversationSummary(id=r[0], title=r[1], database=r[2], created_at=r[3], updated_at=r[4], turns=r[5])


def _turn(r: Sequence[Any]) -> Turn:
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
