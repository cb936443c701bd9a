"""PostgreSQL administration in one place: connection strings for another database of the same server,
passwords kept out of messages, and databases created (empty or as a copy of a template), dropped and
emptied of their sessions. Everything here connects as an administrator; no generated SQL runs here.

Errors come back as ``UserError`` (a name that does not exist, a database that exists already, a script
the server refuses) or ``DatabaseUnavailable`` (the server cannot be reached), never as driver errors.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql as pgsql

from actsagent.errors import DatabaseUnavailable, UserError

MAINTENANCE_DB = "postgres"


# --------------------------------------------------------------------------- connection strings


def conninfo(url: str) -> dict[str, str]:
    """The parts of a PostgreSQL URL or key=value string (host, port, dbname, user, options, ...)."""
    try:
        return {k: str(v) for k, v in psycopg.conninfo.conninfo_to_dict(url).items() if v is not None}
    except psycopg.ProgrammingError as e:
        raise UserError(f"not a PostgreSQL URL: {redact(url)!r} ({first_line(e)})") from e


def url_for(url: str, dbname: str | None = None, **params: str | None) -> str:
    """``url`` for another database of the same server (same host, socket, port and credentials), with
    ``params`` (user, password, options, ...) set, or removed when None."""
    info = conninfo(url)
    if dbname is not None:
        info["dbname"] = dbname
    for key, value in params.items():
        if value is None:
            info.pop(key, None)
        else:
            info[key] = value
    return psycopg.conninfo.make_conninfo(**info)


def dbname_of(url: str) -> str:
    return conninfo(url).get("dbname") or MAINTENANCE_DB


def maintenance_url(url: str) -> str:
    """The server's maintenance database, where databases are created and dropped."""
    return url_for(url, MAINTENANCE_DB)


def server_admin_url() -> str:
    """The maintenance database of the server in use: ``DATABASE_URL``'s server, else the embedded one."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return maintenance_url(url)
    from actsagent.db import embedded

    return embedded.server_url(MAINTENANCE_DB)


def redact(target: str) -> str:
    """``target`` with its password shown as ``***``: a ``postgresql://`` URL keeps its shape, a key=value
    string too; anything else (a SQLite path, a database name) is returned as given."""
    if target.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(target)
        netloc = parts.netloc
        if "@" in netloc:
            creds, host = netloc.rsplit("@", 1)
            user, sep, _ = creds.partition(":")
            netloc = f"{user}:***@{host}" if sep else netloc
        query = (
            "&".join(
                "password=***" if kv.split("=", 1)[0].lower() == "password" else kv for kv in parts.query.split("&")
            )
            if parts.query
            else ""
        )
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    if "=" not in target:
        return target
    try:
        info = psycopg.conninfo.conninfo_to_dict(target)
    except psycopg.ProgrammingError:
        return "<unparseable connection string>"
    if not info.get("password"):
        return target
    info["password"] = "***"
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# --------------------------------------------------------------------------- connections


@contextmanager
def connect(url: str, *, autocommit: bool = True) -> Iterator[psycopg.Connection]:
    """An administrator's connection; an unreachable server is ``DatabaseUnavailable``."""
    try:
        conn = psycopg.connect(url, autocommit=autocommit)
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {redact(url)}: {first_line(e)}") from e
    with conn:
        yield conn


# --------------------------------------------------------------------------- databases


def database_exists(admin: str, name: str) -> bool:
    with connect(admin) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def databases(admin: str, *, like: str | None = None) -> list[str]:
    """Names of the server's databases (not templates), optionally matching a LIKE pattern."""
    with connect(admin) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT datname FROM pg_database WHERE NOT datistemplate AND datname LIKE %s ORDER BY 1", [like or "%"]
            )
        ]


def create_database(admin: str, name: str, *, template: str | None = None, attempts: int = 5) -> None:
    """``CREATE DATABASE name`` (``TEMPLATE template`` for a copy). A copy needs no other session on the
    template: they are terminated, and the copy retried while terminated sessions are still exiting."""
    stmt = pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name))
    if template is not None:
        stmt = pgsql.SQL("{} TEMPLATE {}").format(stmt, pgsql.Identifier(template))
    with connect(admin) as conn:
        if template is not None and _without_fsync(conn):
            stmt = pgsql.SQL("{} STRATEGY FILE_COPY").format(stmt)
        for attempt in range(attempts):
            if template is not None:
                _terminate(conn, template)
            try:
                conn.execute(stmt)
                return
            except psycopg.errors.DuplicateDatabase as e:
                raise UserError(f"database {name!r} exists already") from e
            except psycopg.errors.InvalidCatalogName as e:
                raise UserError(f"template database {template!r} does not exist") from e
            except psycopg.errors.ObjectInUse as e:
                if template is None or attempt == attempts - 1:
                    raise DatabaseUnavailable(f"cannot copy {template!r}: {first_line(e)}") from e
                time.sleep(0.1 * (attempt + 1))
            except psycopg.Error as e:
                raise DatabaseUnavailable(f"cannot create database {name!r}: {first_line(e)}") from e


def _without_fsync(conn: psycopg.Connection) -> bool:
    """Whether the server runs with ``fsync`` off (a scratch server, such as the tests'), where a copy is cheaper as
    a file copy: the checkpoint and file syncs that make ``STRATEGY FILE_COPY`` slow elsewhere cost nothing there,
    and it neither WAL-logs every page nor fills the shared buffers with them (the default ``WAL_LOG``, PostgreSQL
    15+). With ``fsync`` on, ``WAL_LOG`` is faster for small templates, so it stays."""
    if conn.info.server_version < 150000:
        return False
    row = conn.execute("SELECT current_setting('fsync')").fetchone()
    return row is not None and row[0] == "off"


def drop_database(admin: str, name: str) -> None:
    """Drop ``name`` if it exists, ending its sessions first."""
    with connect(admin) as conn:
        _terminate(conn, name)
        conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)))


def _terminate(conn: psycopg.Connection, name: str) -> None:
    conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [name]
    )


def database_comment(admin: str, name: str) -> str | None:
    """The comment on database ``name`` (None when it has none or does not exist)."""
    with connect(admin) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
    return row[0] if row else None


def comment_database(admin: str, name: str, text: str) -> None:
    with connect(admin) as conn:
        conn.execute(pgsql.SQL("COMMENT ON DATABASE {} IS {}").format(pgsql.Identifier(name), pgsql.Literal(text)))


@contextmanager
def advisory_lock(admin: str, key: str, *, poll_s: float = 0.05) -> Iterator[None]:
    """One holder of ``key`` on the server at a time (across processes), for as long as the block runs.

    A waiter tries again every ``poll_s`` rather than blocking in ``pg_advisory_lock``: a blocked statement holds a
    snapshot, and a holder's ``CREATE INDEX CONCURRENTLY`` waits for every older snapshot, so two processes setting
    up at once (copilot replicas creating the checkpoint tables) would wait for each other forever, in a cycle the
    server cannot see (the holder's lock and its index build are on two connections of one client)."""
    with connect(admin) as conn:
        while not (conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [key]).fetchone() or [False])[0]:
            time.sleep(poll_s)
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [key])


# --------------------------------------------------------------------------- scripts and the server


def run_script(url: str, text: str, *, schemas: tuple[str, ...] = (), extensions: tuple[str, ...] = ()) -> None:
    """Run a whole SQL script in one round trip (the simple protocol), after creating ``schemas`` and
    ``extensions`` if missing; a statement the server refuses is a ``UserError`` with its message."""
    with connect(url) as conn:
        try:
            for schema in schemas:
                conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(schema)))
            for ext in extensions:
                conn.execute(pgsql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(pgsql.Identifier(ext)))
            conn.execute(text.encode("utf-8"))
        except psycopg.Error as e:
            raise UserError(e.diag.message_primary or first_line(e)) from e


def available_extensions(url: str) -> set[str]:
    with connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM pg_available_extensions")}


def first_row(
    conn: psycopg.Connection, query: str | pgsql.SQL | pgsql.Composed, params: Sequence[object] | None = None
) -> tuple[Any, ...]:
    """The first row of a query that always returns one (SHOW, count(*), current_user, a lookup by oid)."""
    row = conn.execute(query, params).fetchone()
    if row is None:
        raise LookupError(f"no row from {query!r}")
    return row


def scalar(
    conn: psycopg.Connection, query: str | pgsql.SQL | pgsql.Composed, params: Sequence[object] | None = None
) -> Any:
    """The first value of ``first_row``."""
    return first_row(conn, query, params)[0]


def server_version(url: str) -> str:
    with connect(url) as conn:
        return str(scalar(conn, "SHOW server_version"))


def runs(url: str, sql: str) -> bool:
    """Whether the server runs ``sql`` (a probe for a build feature such as libxml)."""
    with connect(url) as conn:
        try:
            conn.execute(sql)
            return True
        except psycopg.Error:
            return False
