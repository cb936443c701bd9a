"""Pick an engine from a URL, a file path or the name of a database on the embedded server."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from actsagent.config import Limits
from actsagent.db import admin
from actsagent.db.base import Database
from actsagent.db.settings import SessionSettings, as_settings
from actsagent.errors import UserError

_default_settings = SessionSettings()
NO_TARGET = (
    "no database given: pass a postgresql:// URL, a SQLite file or the name of a database on the "
    "embedded server (--db), or set DATABASE_URL"
)


def set_default_settings(settings: SessionSettings | Mapping[str, object] | None) -> None:
    """Settings every later ``open_database`` applies (the CLI's global ``--setting``)."""
    global _default_settings
    _default_settings = as_settings(settings)


def open_database(
    target: str | None = None,
    *,
    limits: Limits | None = None,
    writable: bool = False,
    settings: SessionSettings | Mapping[str, object] | None = None,
    fallback: Callable[[Limits | None], Database] | None = None,
) -> Database:
    """Open ``target``: a postgres URL, ``sqlite:///path``, a ``.sqlite``/``.db`` path, or a database
    name on the embedded server. ``None`` means ``DATABASE_URL``, else ``fallback(limits)`` (the caller's
    default database, e.g. ``actsagent.demo.ensure_demo``), else a ``UserError``.
    ``settings`` (with the defaults of ``set_default_settings``) are SET LOCAL in every transaction."""
    target = target or os.environ.get("DATABASE_URL")
    if target:
        db = _open(target, limits=limits, writable=writable)
    elif fallback is not None:
        db = fallback(limits)
    else:
        raise UserError(NO_TARGET)
    merged = _default_settings.merged(settings)
    if not merged:
        return db
    try:
        return db.with_settings(merged)
    except UserError:
        db.close()
        raise


def _open(target: str, *, limits: Limits | None, writable: bool) -> Database:
    if target.startswith(("postgresql://", "postgres://")) or "host=" in target or "dbname=" in target:
        from actsagent.db.postgres import PostgresDatabase

        return PostgresDatabase(target, limits=limits, writable=writable)
    if target.startswith("sqlite:///"):
        target = target[len("sqlite:///") :]
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

    maintenance = embedded.server_url(admin.MAINTENANCE_DB)
    if not admin.database_exists(maintenance, name):
        if not create:
            raise UserError(f"no database named {name!r} on the embedded server (load one with `actsagent db load`)")
        try:
            admin.create_database(maintenance, name)
        except UserError:
            pass  # another process created it a moment ago
    url = embedded.server_url(name)
    if writable:
        return PostgresDatabase(url, limits=limits, writable=True)
    return PostgresDatabase(reader_url(url), limits=limits, admin_url=url)
