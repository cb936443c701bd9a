"""Pick an engine from a URL, a file path or nothing (the embedded server)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import psycopg

from actsagent.config import Limits
from actsagent.db.base import Database
from actsagent.db.settings import SessionSettings, as_settings
from actsagent.errors import UserError

DEMO_DB = "actsagent_demo"
_default_settings = SessionSettings()


def set_default_settings(settings: SessionSettings | Mapping[str, object] | None) -> None:
    """Settings every later ``open_database`` applies (the CLI's global ``--setting``)."""
    global _default_settings
    _default_settings = as_settings(settings)


def open_database(target: str | None = None, *, limits: Limits | None = None, writable: bool = False,
                  settings: SessionSettings | Mapping[str, object] | None = None) -> Database:
    """Open ``target``: a postgres URL, ``sqlite:///path``, a ``.sqlite``/``.db`` path, or a database
    name on the embedded server. ``None`` means ``DATABASE_URL`` or else the embedded demo database.
    ``settings`` (with the defaults of ``set_default_settings``) are SET LOCAL in every transaction."""
    db = _open(target, limits=limits, writable=writable)
    merged = _default_settings.merged(settings)
    if not merged:
        return db
    try:
        return db.with_settings(merged)
    except UserError:
        db.close()
        raise


def _open(target: str | None, *, limits: Limits | None, writable: bool) -> Database:
    target = target or os.environ.get("DATABASE_URL")
    if not target:
        from actsagent.demo import ensure_demo

        return ensure_demo(limits=limits)
    if target.startswith(("postgresql://", "postgres://")) or "host=" in target or "dbname=" in target:
        from actsagent.db.postgres import PostgresDatabase

        return PostgresDatabase(target, limits=limits, writable=writable)
    if target.startswith("sqlite:///"):
        target = target[len("sqlite:///"):]
        if not target.startswith("/") and not Path(target).exists():
            target = "/" + target
    path = Path(target)
    if path.suffix.lower() in (".sqlite", ".sqlite3", ".db") or path.is_file():
        from actsagent.db.sqlite import SqliteDatabase

        return SqliteDatabase(path, limits=limits, writable=writable)
    if "/" in target or "://" in target:
        raise UserError(f"cannot open {target!r}: give a postgresql:// URL, a SQLite file or an embedded database name")
    return open_embedded(target, limits=limits, writable=writable)


def open_embedded(name: str, *, limits: Limits | None = None, writable: bool = False, create: bool = False) -> Database:
    """A database on the embedded server; ``create`` makes it if missing.

    Queries run as the read-only, non-superuser role ``actsagent_reader`` (provisioned on first use
    of the database); the superuser URL stays in ``admin_url`` for administration (sandbox copies).
    ``writable`` opens the database as the superuser, for callers that write on purpose.
    """
    from actsagent.db import embedded
    from actsagent.db.postgres import PostgresDatabase
    from actsagent.db.roles import reader_url

    admin = embedded.server_url("postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            if not create:
                raise UserError(f"no database named {name!r} on the embedded server "
                                f"(load one with `actsagent db load`)")
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    url = embedded.server_url(name)
    if writable:
        return PostgresDatabase(url, limits=limits, writable=True)
    return PostgresDatabase(reader_url(url), limits=limits, admin_url=url)
