"""The demo shop database, loaded into the embedded PostgreSQL on first use."""

from __future__ import annotations

from importlib import resources

import psycopg
from psycopg import sql as pgsql

from actsagent.config import Limits
from actsagent.db.base import Database
from actsagent.db.connect import DEMO_DB, open_embedded


def load_demo(url: str) -> dict[str, int]:
    """Create the demo tables in the (empty) database at ``url`` and fill them; returns row counts."""
    from actsagent.demo.generate import generate

    ddl = resources.files("actsagent.demo").joinpath("schema.sql").read_text()
    data = generate()
    with psycopg.connect(url) as conn:
        conn.execute(ddl)
        for table, rows in data.items():
            with conn.cursor().copy(pgsql.SQL("COPY {} FROM STDIN").format(pgsql.Identifier(table))) as cp:
                for r in rows:
                    cp.write_row(r)
        conn.execute("ANALYZE")
        conn.commit()
    return {t: len(r) for t, r in data.items()}


def ensure_demo(*, limits: Limits | None = None) -> Database:
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
