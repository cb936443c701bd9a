"""Conversations in PostgreSQL, shared by several copilot replicas (``actsagent serve --store postgresql://...``).

The tables live in a schema of their own (``actsagent_copilot``), beside the agent's checkpoints
(``langgraph-checkpoint-postgres``), so a turn started on one replica can be streamed, and its
clarification answered, on another. Replicas creating the tables at once take turns (an advisory lock).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool

from actsagent.db.admin import first_line, redact
from actsagent.errors import UserError
from actsagent.web.store import DEFAULT_LEASE_S, ONE_RUNNING, ConversationStore, StoreTarget

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS conversations (
        id TEXT PRIMARY KEY, title TEXT NOT NULL, database TEXT NOT NULL DEFAULT '',
        created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS turns (
        id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL, kind TEXT NOT NULL, question TEXT NOT NULL DEFAULT '', sql TEXT,
        status TEXT NOT NULL, thread_id TEXT, final_sql TEXT, answer TEXT, created_at DOUBLE PRECISION NOT NULL,
        owner TEXT)""",
    "CREATE INDEX IF NOT EXISTS turns_conv ON turns(conversation_id, idx)",
    f"CREATE UNIQUE INDEX IF NOT EXISTS {ONE_RUNNING} ON turns(conversation_id) WHERE status = 'running'",
    "CREATE INDEX IF NOT EXISTS turns_running ON turns(owner) WHERE status = 'running'",
    """CREATE TABLE IF NOT EXISTS events (
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (turn_id, seq))""",
    "CREATE TABLE IF NOT EXISTS replicas (id TEXT PRIMARY KEY, seen_at DOUBLE PRECISION NOT NULL)",
]


def setup_lock(conn: psycopg.Connection, schema: str) -> None:
    """Hold, until the transaction ends, the lock replicas take to create the tables of ``schema``."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"actsagent setup {schema}"])


class _Conn:
    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.conn.execute(sql.replace("?", "%s"), args)  # our own SQL, never input
        return cur.fetchall() if cur.description else []

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql.replace("?", "%s"), args).rowcount


class PostgresStore(ConversationStore):
    NOW = "extract(epoch FROM clock_timestamp())::double precision"

    def __init__(self, target: StoreTarget, *, lease_s: float = DEFAULT_LEASE_S, max_connections: int = 8) -> None:
        super().__init__(lease_s=lease_s)
        assert target.url is not None
        self._target = target
        self.url, self.schema = target.url, target.pg_schema
        where = f"the conversation store {redact(self.url)}"
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn, conn.transaction():
                setup_lock(conn, self.schema)
                conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(self.schema)))
                conn.execute(pgsql.SQL("SET LOCAL search_path TO {}").format(pgsql.Identifier(self.schema)))
                for stmt in _SCHEMA:
                    conn.execute(stmt)  # constant DDL
        except (psycopg.Error, OSError) as e:
            raise UserError(f"cannot open {where}: {first_line(e)}") from None
        self.options = f"-c search_path={self.schema}"
        self._pool = ConnectionPool(
            self.url,
            kwargs={"autocommit": True, "options": self.options},
            min_size=1,
            max_size=max_connections,
            name="actsagent-copilot-store",
            open=True,
        )
        self._saver: Any = None
        self.beat()

    @property
    def target(self) -> StoreTarget:
        return self._target

    @contextmanager
    def session(self) -> Iterator[_Conn]:
        with self._pool.connection() as conn:
            yield _Conn(conn)

    @contextmanager
    def transaction(self) -> Iterator[_Conn]:
        with self._pool.connection() as conn, conn.transaction():
            yield _Conn(conn)

    def lock_conversation(self, s: Any, cid: str) -> None:
        s.rows("SELECT 1 FROM conversations WHERE id = ? FOR UPDATE", (cid,))

    def is_busy(self, e: Exception) -> bool:
        return isinstance(e, psycopg.errors.UniqueViolation) and e.diag.constraint_name == ONE_RUNNING

    def checkpointer(self) -> Any:
        """The agent's checkpoints in this store's schema: a run paused on one replica resumes on another."""
        if self._saver is None:
            from actsagent.graphs.checkpoint import postgres_checkpointer

            try:
                self._saver = postgres_checkpointer(self.url, self.schema)
            except psycopg.Error as e:
                raise UserError(f"cannot keep the agent's runs in {redact(self.url)}: {first_line(e)}") from None
        return self._saver

    def _close(self) -> None:
        if self._saver is not None:
            self._saver.conn.close()  # its pool
        self._pool.close()
