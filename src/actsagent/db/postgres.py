"""PostgreSQL through psycopg 3 and a connection pool: the only module that talks psycopg."""

from __future__ import annotations

import logging
import time
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool, PoolTimeout

from actsagent.config import Limits
from actsagent.db.base import Database
from actsagent.db.classify import classify_postgres
from actsagent.db.results import Column, DbError, ErrorClass, ExecResult, QueryResult
from actsagent.errors import DatabaseUnavailable


class PostgresDatabase(Database):
    dialect = "postgres"

    def __init__(self, url: str, *, limits: Limits | None = None, writable: bool = False,
                 pool_size: int = 4, single_statement: bool = True) -> None:
        super().__init__(limits)
        self.url = url
        self.writable = writable
        self.single_statement = single_statement
        try:
            info = psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError as e:
            from actsagent.errors import UserError

            raise UserError(f"not a PostgreSQL URL: {url!r} ({e})") from e
        self.name = str(info.get("dbname") or info.get("user") or "postgres")
        self._pool = ConnectionPool(url, min_size=0, max_size=pool_size, open=False,
                                    kwargs={"autocommit": False}, timeout=10)
        try:
            self._pool.open(wait=False)
            with self._pool.connection(timeout=10) as conn:
                conn.execute("SELECT 1")
                self.server_version = conn.info.server_version
        except (psycopg.OperationalError, PoolTimeout) as e:
            self._pool.close()
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {_redact(url)}: {_first_line(e)}") from e
        self._types: dict[int, str] = {}

    def _type_name(self, conn: psycopg.Connection[Any], oid: int) -> str:
        if oid not in self._types:
            row = conn.execute("SELECT format_type(%s, NULL)", [oid]).fetchone()
            self._types[oid] = row[0] if row else str(oid)
        return self._types[oid]

    def execute(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None,
                read_only: bool = True) -> ExecResult:
        try:
            return self._execute_once(sql, max_rows, timeout_s, read_only)
        except _StaleConnection:
            # pooled connections were closed under us (server restart, sandbox copy): drop the dead ones, retry once
            self.discard_broken_connections()
            try:
                return self._execute_once(sql, max_rows, timeout_s, read_only)
            except _StaleConnection as e:
                raise DatabaseUnavailable(f"PostgreSQL connection lost: {e}") from e

    def _execute_once(self, sql: str, max_rows: int | None, timeout_s: float | None,
                      read_only: bool) -> ExecResult:
        cap = max_rows or self.limits.max_rows
        timeout_ms = int((timeout_s or self.limits.statement_timeout_s) * 1000)
        ro = read_only or not self.writable
        start = time.perf_counter()
        try:
            conn_cm = self._pool.connection()
            conn = conn_cm.__enter__()
        except (psycopg.OperationalError, PoolTimeout) as e:
            raise DatabaseUnavailable(f"PostgreSQL is unreachable: {_first_line(e)}") from e
        sent = False
        try:
            with conn.cursor() as cur:
                if ro:
                    cur.execute("SET TRANSACTION READ ONLY")
                # SET LOCAL, not set_config(): the read-only role has EXECUTE on set_config revoked.
                cur.execute(pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(timeout_ms)))
                start = time.perf_counter()
                sent = True
                # prepare=True forces the extended protocol: the server refuses a second statement.
                cur.execute(sql, prepare=self.single_statement or None)
                cols: list[Column] = []
                rows: list[tuple[Any, ...]] = []
                if cur.description is not None:
                    rows = cur.fetchmany(cap + 1)
                    cols = [Column(name=d.name, type=self._type_name(conn, d.type_code)) for d in cur.description]
                elapsed = (time.perf_counter() - start) * 1000
                status = cur.statusmessage or ""
            if ro:
                conn.rollback()
            else:
                conn.commit()
            truncated = len(rows) > cap
            rows = rows[:cap]
            return QueryResult(sql=sql, columns=cols, rows=[list(r) for r in rows], row_count=len(rows),
                               truncated=truncated, elapsed_ms=elapsed, status=status)
        except psycopg.Error as e:
            elapsed = (time.perf_counter() - start) * 1000
            try:
                conn.rollback()
            except psycopg.Error:
                pass
            if isinstance(e, psycopg.OperationalError) and conn.closed:
                if not sent:
                    raise _StaleConnection(_first_line(e)) from e
                raise DatabaseUnavailable(f"PostgreSQL connection lost: {_first_line(e)}") from e
            return _to_error(sql, e, elapsed)
        finally:
            conn_cm.__exit__(None, None, None)

    def discard_broken_connections(self) -> None:
        """Check idle pooled connections and drop the dead ones (after their sessions were terminated)."""
        log = logging.getLogger("psycopg.pool")
        level = log.level
        log.setLevel(logging.ERROR)  # "discarding broken connection" is the expected outcome here
        try:
            self._pool.check()
        finally:
            log.setLevel(level)

    def close(self) -> None:
        self._pool.close()


class _StaleConnection(Exception):
    pass


def _to_error(sql: str, e: psycopg.Error, elapsed_ms: float) -> DbError:
    diag = e.diag
    message = diag.message_primary or _first_line(e)
    state = e.sqlstate
    if state is None and "multiple commands" in message:
        state = "42601"
    cls, ident = classify_postgres(state, message)
    if "cannot insert multiple commands" in message:
        cls, message = ErrorClass.SYNTAX, "multiple statements are not allowed: " + message
    pos = diag.statement_position
    return DbError(sql=sql, engine="postgres", error_class=cls, message=message, code=state, identifier=ident,
                   position=int(pos) if pos else None, detail=diag.message_detail, hint=diag.message_hint,
                   elapsed_ms=elapsed_ms)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _redact(url: str) -> str:
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparseable URL>"
    if info.get("password"):
        info["password"] = "***"
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})
