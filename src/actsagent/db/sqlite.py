"""SQLite files (Spider, BIRD): opened read-only unless a writable copy is asked for."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from sqlglot import exp

from actsagent.config import Limits
from actsagent.db.base import CappedRows, Database, refuse_nul
from actsagent.db.classify import classify_sqlite
from actsagent.db.results import Column, DbError, ExecResult
from actsagent.errors import DatabaseUnavailable, UserError


class SqliteDatabase(Database):
    dialect = "sqlite"

    def __init__(self, path: str | Path, *, limits: Limits | None = None, writable: bool = False) -> None:
        super().__init__(limits)
        self.path = Path(path)
        if not self.path.is_file():
            raise UserError(f"SQLite database not found: {self.path}")
        self.url = f"sqlite:///{self.path}"
        self.name = self.path.stem
        self.writable = writable
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            mode = "rw" if self.writable else "ro"
            try:
                conn = sqlite3.connect(
                    f"file:{self.path}?mode={mode}", uri=True, check_same_thread=False, isolation_level=None
                )
                conn.execute("select 1 from sqlite_master limit 1")
                # no single string or blob over the byte cap: zeroblob(1e9) or printf('%.*c', ...) fail at once
                conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(self.limits.max_result_bytes, 1_000_000_000))
            except sqlite3.DatabaseError as e:
                raise DatabaseUnavailable(f"cannot open SQLite file {self.path}: {e}") from e
            conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None, read_only: bool = True
    ) -> ExecResult:
        refused = refuse_nul(sql, "sqlite")
        if refused is not None:
            return refused
        cap = max_rows or self.limits.max_rows
        timeout = timeout_s or self.limits.statement_timeout_s
        conn = self._conn()
        deadline = time.perf_counter() + timeout
        conn.set_progress_handler(lambda: 1 if time.perf_counter() > deadline else 0, 2000)
        start = time.perf_counter()
        try:
            if read_only or not self.writable:
                conn.execute("PRAGMA query_only = ON")
            conn.execute("BEGIN")
            cur = conn.execute(sql)
            kept = CappedRows(cap, self.limits.max_result_bytes)
            while cur.description and (row := cur.fetchone()) is not None and kept.keep(row):
                pass  # SQLite computes rows as they are stepped: stopping here stops the work
            cols = [Column(name=d[0], type="") for d in (cur.description or [])]
            too_large = kept.row_too_large(sql, "sqlite", (time.perf_counter() - start) * 1000)
            if read_only or not self.writable or too_large:
                conn.execute("ROLLBACK")
            else:
                conn.execute("COMMIT")
            if too_large:
                return too_large
            elapsed = (time.perf_counter() - start) * 1000
            return kept.result(sql, cols, elapsed, f"SELECT {len(kept.rows)}" if cols else "OK")
        except (sqlite3.Error, ValueError, OverflowError) as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            msg = str(e)
            if isinstance(e, sqlite3.Warning) and "one statement" in msg:
                msg = "multiple statements: " + msg
            cls, ident = classify_sqlite(msg)
            return DbError(
                sql=sql,
                engine="sqlite",
                error_class=cls,
                message=msg,
                code=getattr(e, "sqlite_errorname", None),
                identifier=ident,
                elapsed_ms=(time.perf_counter() - start) * 1000,
            )
        finally:
            conn.execute("PRAGMA query_only = OFF")
            conn.set_progress_handler(None, 0)

    def close(self) -> None:
        with self._lock:
            for c in self._conns:
                c.close()
            self._conns.clear()
        self._local = threading.local()


def create_sqlite_file(path: Path, statements: list[str], *, attach: Mapping[str, Path] | None = None) -> None:
    """Write a new SQLite file at ``path`` (replacing one that is there) by running ``statements`` in one
    transaction, with other files attached read-only under the given names (``INSERT ... SELECT * FROM
    src.t``); an attached file is never written."""
    if path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        for name, source in (attach or {}).items():
            conn.execute(
                f"ATTACH DATABASE ? AS {exp.to_identifier(name, quoted=True).sql('sqlite')}",
                [f"file:{Path(source).resolve()}?mode=ro"],
            )
        for stmt in statements:
            conn.execute(stmt)
        conn.commit()
        for name in attach or {}:
            conn.execute(f"DETACH DATABASE {exp.to_identifier(name, quoted=True).sql('sqlite')}")
    finally:
        conn.close()
