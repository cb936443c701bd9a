"""One setup script on both engines: the operator tests run every case on PostgreSQL and on SQLite."""

from __future__ import annotations

import sqlite3


def open_engine(request, tmp_path, setup: list[str]):
    """The database for ``request.param`` ("postgres" or "sqlite"), created from ``setup``."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_db_factory")(setup)
    from actsagent.db.sqlite import SqliteDatabase

    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as conn:
        for s in setup:
            conn.execute(s)
    db = SqliteDatabase(path)
    request.addfinalizer(db.close)
    return db


def sorted_rows(db, sql: str) -> list[tuple[str, ...]]:
    """Rows as sorted string tuples, comparable across engines."""
    res = db.execute(sql)
    assert res.ok, res
    return sorted(tuple(str(v) for v in r) for r in res.rows)


def sqlite_file(path, setup: list[str]):
    """A SQLite file at ``path`` made from ``setup``; returns the path."""
    with sqlite3.connect(path) as conn:
        for s in setup:
            conn.execute(s)
    return path
