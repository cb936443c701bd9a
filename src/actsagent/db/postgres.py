"""PostgreSQL through psycopg 3 and a connection pool, each query in its own bounded transaction."""

from __future__ import annotations

import copy
import json
import logging
import math
import re
import time
from collections.abc import Mapping
from typing import Any, Self

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool, PoolTimeout

from actsagent.config import Limits
from actsagent.db.admin import conninfo, first_line, redact
from actsagent.db.base import Database, refuse_nul
from actsagent.db.classify import classify_postgres
from actsagent.db.embedded import local_postmaster
from actsagent.db.pgfetch import DeadlinePassed, fetch, settle
from actsagent.db.results import Column, DbError, ErrorClass, ExecResult
from actsagent.db.settings import SessionSettings, as_settings
from actsagent.db.watchdog import WATCHDOG
from actsagent.errors import DatabaseUnavailable

MIB = 1024 * 1024


class PostgresDatabase(Database):
    """A pooled PostgreSQL database. ``admin_url`` is set when queries run as a restricted role and
    administration (sandbox copies) must connect as someone else: the embedded server's superuser."""

    dialect = "postgres"

    def __init__(
        self,
        url: str,
        *,
        limits: Limits | None = None,
        writable: bool = False,
        pool_size: int = 4,
        single_statement: bool = True,
        admin_url: str | None = None,
    ) -> None:
        super().__init__(limits)
        self.url = url
        self.admin_url = admin_url
        self.writable = writable
        self.single_statement = single_statement
        self.settings = SessionSettings()
        self._owner = True  # views from with_settings share the pool and never close it
        info = conninfo(url)
        self.name = info.get("dbname") or info.get("user") or "postgres"
        wait = self.limits.connect_timeout_s
        kwargs: dict[str, Any] = {"autocommit": False}
        if "connect_timeout" not in info:
            kwargs["connect_timeout"] = max(2, math.ceil(wait))  # libpq's minimum is 2 s
        self._refusals: list[tuple[float, psycopg.OperationalError]] = []  # the pool's last refused attempt
        self._pool = ConnectionPool(
            url,
            min_size=0,
            max_size=pool_size,
            open=False,
            kwargs=kwargs,
            timeout=wait,
            connection_class=_recording_refusals(self._refusals),
        )
        try:
            self._pool.open(wait=False)
            conn = self._getconn(wait, first=True)
            try:
                conn.execute("SELECT 1")
                self.server_version = conn.info.server_version
                self.user = conn.info.user
                self.superuser = conn.info.parameter_status("is_superuser") == "on"
                conn.rollback()
            finally:
                self._pool.putconn(conn)
        except (psycopg.OperationalError, PoolTimeout) as e:
            self._pool.close()
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {redact(url)}: {first_line(e)}") from e
        self._postmaster = local_postmaster(url)
        self._types: dict[int, str] = {}

    def with_settings(self, settings: SessionSettings | Mapping[str, object] | None) -> PostgresDatabase:
        """This database for one caller: ``settings`` are SET LOCAL in each of its transactions.

        The view shares the pool (closing it does nothing) but not the schema cache: value samples
        are read under the caller's settings, so row-level security decides what they show.
        """
        view = copy.copy(self)
        view.settings = self.settings.merged(as_settings(settings))
        view._schema = None
        view._owner = False
        return view

    @property
    def cache_key(self) -> str:
        return self.url + ("#" + json.dumps(self.settings.values, sort_keys=True) if self.settings else "")

    def _type_name(self, conn: psycopg.Connection[Any], oid: int) -> str:
        if oid not in self._types:
            row = conn.execute("SELECT format_type(%s, NULL)", [oid]).fetchone()
            self._types[oid] = row[0] if row else str(oid)
        return self._types[oid]

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None, read_only: bool = True
    ) -> ExecResult:
        refused = refuse_nul(sql, "postgres")
        if refused is not None:
            return refused
        try:
            return self._execute_once(sql, max_rows, timeout_s, read_only)
        except _StaleConnection:
            # pooled connections were closed under us (server restart, sandbox copy): drop the dead ones, retry once
            self.discard_broken_connections()
            try:
                return self._execute_once(sql, max_rows, timeout_s, read_only)
            except _StaleConnection as e:
                raise DatabaseUnavailable(f"PostgreSQL connection lost: {e}") from e

    def _preamble(self, ro: bool, timeout_s: float) -> pgsql.Composed:
        """One round trip of SETs for the transaction (SET LOCAL, not set_config(): the read-only role
        may not execute set_config, and a SET LOCAL ends with the transaction)."""
        parts: list[pgsql.Composable] = [pgsql.SQL("SET TRANSACTION READ ONLY")] if ro else []
        local = [("statement_timeout", f"{int(timeout_s * 1000)}ms"), ("work_mem", f"{self.limits.work_mem_mb}MB")]
        if self.superuser:  # a superuser-only setting: the read-only role has it as a role default instead
            local.append(("temp_file_limit", f"{self.limits.temp_file_limit_mb}MB"))
        local += list(self.settings.values.items())
        for name, value in local:
            ident = pgsql.SQL(".").join(pgsql.Identifier(p) for p in name.split("."))
            parts.append(pgsql.SQL("SET LOCAL {} = {}").format(ident, pgsql.Literal(value)))
        return pgsql.SQL("; ").join(parts)

    def _execute_once(self, sql: str, max_rows: int | None, timeout_s: float | None, read_only: bool) -> ExecResult:
        cap = max_rows or self.limits.max_rows
        timeout = timeout_s or self.limits.statement_timeout_s
        ro = read_only or not self.writable
        start = time.perf_counter()
        try:
            conn = self._getconn(self.limits.connect_timeout_s + timeout)
        except (psycopg.OperationalError, PoolTimeout) as e:
            raise DatabaseUnavailable(f"PostgreSQL is unreachable: {first_line(e)}") from e
        sent = False
        watch = None
        try:
            conn.execute(self._preamble(ro, timeout))
            start = time.perf_counter()
            sent = True
            memory = self.limits.max_server_memory_mb * MIB
            # the client's deadline: a little after the server's, whose own error says more when it fires first
            client_timeout = timeout + min(0.25, timeout * 0.05)
            with WATCHDOG.watch(conn, client_timeout, memory_limit=memory, postmaster=self._postmaster) as watch:
                got = fetch(
                    conn,
                    sql,
                    max_rows=cap,
                    max_bytes=self.limits.max_result_bytes,
                    deadline=time.monotonic() + client_timeout,
                    stream=ro,
                    single_statement=self.single_statement,
                )
            elapsed = (time.perf_counter() - start) * 1000
            if ro:
                conn.rollback()  # before the type names: a stream left early leaves the transaction cancelled
            too_large = got.row_too_large(sql, "postgres", elapsed)
            if too_large:
                conn.rollback()
                return too_large
            cols = [Column(name=n, type=self._type_name(conn, oid)) for n, oid in got.columns]
            if ro:
                conn.rollback()
            else:
                conn.commit()
                if self.settings:
                    conn.execute("RESET ALL")  # a committed SET must not outlive this caller on a pooled session
                    conn.commit()
            return got.result(sql, cols, elapsed, got.status)
        except (psycopg.Error, DeadlinePassed) as e:
            elapsed = (time.perf_counter() - start) * 1000
            try:
                settle(conn)
                conn.rollback()
            except psycopg.Error:
                pass
            if isinstance(e, psycopg.OperationalError) and conn.closed:
                if not sent:
                    raise _StaleConnection(first_line(e)) from e
                raise DatabaseUnavailable(f"PostgreSQL connection lost: {first_line(e)}") from e
            reason = watch.reason if watch is not None else None
            if isinstance(e, DeadlinePassed) or reason == "timeout":
                return DbError(
                    sql=sql,
                    engine="postgres",
                    error_class=ErrorClass.TIMEOUT,
                    code="57014",
                    message=f"canceling statement: the result was not complete after {timeout:g} s",
                    elapsed_ms=elapsed,
                )
            if reason == "memory":
                return DbError(
                    sql=sql,
                    engine="postgres",
                    error_class=ErrorClass.RESOURCE_LIMIT,
                    code="53200",
                    message=f"canceling statement: its server process held more than "
                    f"{self.limits.max_server_memory_mb} MB of memory",
                    elapsed_ms=elapsed,
                )
            return _to_error(sql, e, elapsed)
        finally:
            self._pool.putconn(conn)

    def _getconn(self, timeout: float, *, first: bool = False) -> psycopg.Connection[Any]:
        """A pooled connection within ``timeout``. When the pool has to open one and the server answers that the
        database or the role does not exist (dropped under us), or, for the ``first`` connection, refuses it in
        any way, that is the answer at once: the pool would only retry until the whole wait is over."""
        start = time.monotonic()
        while True:
            left = timeout - (time.monotonic() - start)
            try:
                return self._pool.getconn(timeout=max(0.0, min(_REFUSAL_CHECK_S, left)))
            except PoolTimeout:
                refused = [str(e) for at, e in self._refusals if at >= start and (first or _GONE.search(str(e)))]
                if refused:
                    raise psycopg.OperationalError(refused[-1]) from None
                if left <= _REFUSAL_CHECK_S:
                    raise

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
        if self._owner:
            self._pool.close()


class _StaleConnection(Exception):
    pass


_REFUSAL_CHECK_S = 0.1  # how often a wait for a pooled connection looks at the pool's refused attempts
_GONE = re.compile(r'FATAL:\s+(database|role) "[^"]*" does not exist')


class _Connection(psycopg.Connection[Any]):
    """A connection that cancels only a statement still running.

    psycopg's ``stream()`` sends a cancel request whenever it leaves a statement before reading its end, also after
    the server ended it with an error: a connection of its own (a process the postmaster starts) and a wait, for
    every statement that fails. The server's error ends the statement; the clean-up then reads its end, and a
    cancel is left for a result given up early (a row cap, a deadline).
    """

    def _try_cancel(self, *, timeout: float = 5.0) -> None:  # psycopg's clean-up of stream() and copy()
        if self.pgconn.error_message:  # this statement's error (libpq clears it when a statement starts)
            return
        super()._try_cancel(timeout=timeout)


def _recording_refusals(
    refusals: list[tuple[float, psycopg.OperationalError]],
) -> type[psycopg.Connection[Any]]:
    """A connection class for the pool that keeps its last refused attempt in ``refusals`` (empty after a success):
    the pool opens connections in its own threads and only retries a refusal."""

    class Recording(_Connection):
        @classmethod
        def connect(cls, *args: Any, **kwargs: Any) -> Self:
            try:
                conn = super().connect(*args, **kwargs)
            except psycopg.OperationalError as e:
                refusals[:] = [(time.monotonic(), e)]
                raise
            refusals.clear()
            return conn

    return Recording


def _to_error(sql: str, e: psycopg.Error, elapsed_ms: float) -> DbError:
    diag = e.diag
    message = diag.message_primary or first_line(e)
    state = e.sqlstate
    if state is None and "multiple commands" in message:
        state = "42601"
    cls, ident = classify_postgres(state, message)
    if "cannot insert multiple commands" in message:
        cls, message = ErrorClass.SYNTAX, "multiple statements are not allowed: " + message
    if message.startswith("COPY cannot be used"):  # psycopg's words for a COPY to or from the client
        message = "COPY to or from the client is not supported here; write a SELECT"
    pos = diag.statement_position
    return DbError(
        sql=sql,
        engine="postgres",
        error_class=cls,
        message=message,
        code=state,
        identifier=ident,
        position=int(pos) if pos else None,
        detail=diag.message_detail,
        hint=diag.message_hint,
        elapsed_ms=elapsed_ms,
    )
