"""The demo shop database, loaded into the embedded PostgreSQL on first use, and the default database of
the CLI, the copilot and the Studio graph when no database is given."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from actsagent.config import Limits
from actsagent.db.base import Database
from actsagent.db.connect import open_database, open_embedded
from actsagent.db.loader import load_rows
from actsagent.db.settings import SessionSettings

DEMO_DB = "actsagent_demo"


def load_demo(url: str) -> dict[str, int]:
    """Create the demo tables in the (empty) database at ``url`` and fill them; returns row counts."""
    from actsagent.demo.generate import generate

    ddl = resources.files("actsagent.demo").joinpath("schema.sql").read_text()
    return load_rows(url, ddl, generate())


def ensure_demo(limits: Limits | None = None) -> Database:
    """The demo database on the embedded server, created and loaded (as the administrator) the first
    time; its queries run as the read-only role, whose grants are refreshed after the load."""
    from actsagent.db.roles import reader_url

    db = open_embedded(DEMO_DB, limits=limits, create=True)
    res = db.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'payments'")
    if res.ok and res.rows[0][0] == 0:
        admin = getattr(db, "admin_url", None) or db.url
        load_demo(admin)
        reader_url(admin, refresh=True)
        db.invalidate_schema()
    return db


def open_target(
    target: str | None = None,
    *,
    limits: Limits | None = None,
    writable: bool = False,
    settings: SessionSettings | Mapping[str, object] | None = None,
) -> Database:
    """``open_database(target)``, where neither a target nor ``DATABASE_URL`` means the demo database."""
    return open_database(target, limits=limits, writable=writable, settings=settings, fallback=ensure_demo)
