"""Fetch a PostgreSQL result a row at a time, under a row cap, a byte cap and a deadline.

``cursor.execute`` would receive the whole result before returning (1000 rows of 500 KB are
500 MB in the client); ``cursor.stream`` uses single-row mode, so the fetch stops at the first
row over a cap and psycopg cancels the rest. Streaming also sends the statement alone (the
extended protocol), so the server refuses a second statement hidden in the text.
"""

from __future__ import annotations

import time
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import pq

from actsagent.db.base import CappedRows


class DeadlinePassed(Exception):
    """The client-side deadline passed while rows were still arriving."""


@dataclass
class Fetched(CappedRows):
    columns: list[tuple[str, int]] = field(default_factory=list)  # name, type oid
    status: str = ""


def fetch(
    conn: psycopg.Connection[Any],
    sql: str,
    *,
    max_rows: int,
    max_bytes: int,
    deadline: float,
    stream: bool = True,
    single_statement: bool = True,
) -> Fetched:
    """Run ``sql`` on ``conn`` (inside the caller's transaction) and keep what fits the caps.

    ``deadline`` is a ``time.monotonic()`` value; passing it raises ``DeadlinePassed``. Leaving a
    stream early cancels the statement, which is right for reads only: a write (``stream`` False)
    runs to its end, its result arrives whole and is then cut to the caps as it is converted.
    With ``single_statement`` False the text may hold a script (simple protocol, sandboxes only).
    """
    if not stream or not single_statement:
        return _fetch_whole(conn, sql, max_rows, max_bytes, single_statement)
    out = Fetched(max_rows, max_bytes)
    cur = conn.cursor()
    try:
        # closing: leaving early cancels the rest of the result. psycopg annotates stream() as an Iterator; it is
        # a generator, which has the close() that closing() calls
        with closing(cur.stream(sql)) as rows:  # type: ignore[type-var]
            for row in rows:
                if not out.columns and cur.description:
                    out.columns = [(d.name, d.type_code) for d in cur.description]
                if not out.keep(row):
                    break
                if time.monotonic() > deadline:
                    raise DeadlinePassed()
    except psycopg.ProgrammingError:
        # stream() refuses a statement without a result set (SET, DDL, DML without RETURNING) after it ran;
        # a server error leaves the transaction failed, so only a clean one means "ran, no rows"
        if out.rows or conn.info.transaction_status != pq.TransactionStatus.INTRANS:
            raise
        out.status = "OK"
        return out
    if not out.columns:
        out.columns = _describe(conn, sql)
    out.status = f"SELECT {len(out.rows)}" if out.columns else "OK"
    return out


def _fetch_whole(
    conn: psycopg.Connection[Any], sql: str, max_rows: int, max_bytes: int, single_statement: bool
) -> Fetched:
    cur = conn.cursor()
    cur.execute(sql, prepare=single_statement or None)  # prepare: the extended protocol, one statement only
    out = Fetched(max_rows, max_bytes, status=cur.statusmessage or "")
    if cur.description is None:
        return out
    out.columns = [(d.name, d.type_code) for d in cur.description]
    while (row := cur.fetchone()) is not None and out.keep(row):  # converted one at a time: the caps bound it
        pass
    return out


def _describe(conn: psycopg.Connection[Any], sql: str) -> list[tuple[str, int]]:
    """Column names and types of a statement that returned no row (stream() does not keep them)."""
    pgconn, enc = conn.pgconn, conn.info.encoding
    res = pgconn.prepare(b"", sql.encode(enc))
    if res.status != pq.ExecStatus.COMMAND_OK:
        return []
    res = pgconn.describe_prepared(b"")
    if res.status != pq.ExecStatus.COMMAND_OK:
        return []
    return [((res.fname(i) or b"").decode(enc, "replace"), res.ftype(i)) for i in range(res.nfields)]


def settle(conn: psycopg.Connection[Any]) -> None:
    """Bring back a connection a statement left busy, so it can roll back and return to the pool.

    ``COPY ... TO STDOUT`` (allowed to anyone who may SELECT) leaves the connection in COPY state,
    which neither stream() nor execute() will read: cancel it, read what was in flight, end it.
    """
    pg = conn.pgconn
    if pg.transaction_status != pq.TransactionStatus.ACTIVE:
        return
    try:
        conn.cancel_safe(timeout=2.0)
    except psycopg.Error:
        pass
    for _ in range(1000):
        res = pg.get_result()
        if res is None:
            break
        if res.status == pq.ExecStatus.COPY_OUT:
            while pg.get_copy_data(0)[0] >= 0:  # blocking; the cancel ends it
                pass
        elif res.status == pq.ExecStatus.COPY_IN:
            pg.put_copy_end(b"actsagent does not send COPY data")
