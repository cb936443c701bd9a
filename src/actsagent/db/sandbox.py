"""Disposable copies of a PostgreSQL database, where any statement may run.

BIRD-CRITIC tasks include DDL and DML, so offline repair runs in a copy made with
``CREATE DATABASE ... TEMPLATE ...`` and dropped afterwards; the template is never touched.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql as pgsql

from actsagent.config import Limits
from actsagent.db.postgres import PostgresDatabase
from actsagent.errors import DatabaseUnavailable, UserError


def _admin_url(url: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = "postgres"
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})


def _with_db(url: str, dbname: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = dbname
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})


@contextmanager
def sandbox(template: PostgresDatabase | str, *, limits: Limits | None = None,
            name: str | None = None) -> Iterator[PostgresDatabase]:
    """Yield a writable copy of ``template`` (a Database or a URL); drop it on exit.

    The copy is made and used as the administrator (``template.admin_url`` when the template's
    queries run as the read-only role). A template restricted by per-caller settings is refused:
    as the administrator the copy would show every tenant's rows.
    """
    if isinstance(template, PostgresDatabase):
        if template.settings:
            raise UserError("a disposable copy runs as the administrator, which row-level security does not "
                            "restrict; it is not available to a caller with per-caller settings")
        url = template.admin_url or template.url
    else:
        url = template
    info = psycopg.conninfo.conninfo_to_dict(url)
    source = str(info.get("dbname") or "postgres")
    copy = name or f"{source[:40]}_sbx_{uuid.uuid4().hex[:10]}"
    admin = _admin_url(url)
    try:
        _copy_database(admin, source, copy)
    except psycopg.errors.InvalidCatalogName as e:
        raise UserError(f"template database {source!r} does not exist") from e
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot create a sandbox from {source!r}: {e}") from e
    finally:
        if isinstance(template, PostgresDatabase):
            template.discard_broken_connections()  # its sessions were terminated for the copy
    db = PostgresDatabase(_with_db(url, copy), limits=limits, writable=True, single_statement=False)
    try:
        yield db
    finally:
        db.close()
        with psycopg.connect(admin, autocommit=True) as conn:
            _terminate(conn, copy)
            conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {}").format(pgsql.Identifier(copy)))


def _copy_database(admin: str, source: str, copy: str, attempts: int = 5) -> None:
    """CREATE DATABASE ... TEMPLATE needs no other session on the source: terminate them, and retry
    while terminated sessions are still exiting ("being accessed by other users")."""
    with psycopg.connect(admin, autocommit=True) as conn:
        for attempt in range(attempts):
            _terminate(conn, source)
            try:
                conn.execute(pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    pgsql.Identifier(copy), pgsql.Identifier(source)))
                return
            except psycopg.errors.ObjectInUse:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))


def _terminate(conn: psycopg.Connection, dbname: str) -> None:
    conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                 [dbname])
