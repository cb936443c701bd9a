"""The SafeQL value index through pgvector's psycopg adapter: numpy vectors as parameters, values with quotes,
an index in a separate database shared by several sources (a SQLite file included), older layouts upgraded."""

from __future__ import annotations

import sqlite3

import numpy as np
import psycopg

from actsagent.db.sqlite import SqliteDatabase
from actsagent.db.value_store import INDEX_URL_VAR, ValueStore, source_key
from actsagent.safeql.catalog import build_catalog

NAMES = [
    "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)",
    "INSERT INTO people VALUES (1, 'O''Brien'), (2, 'back\\slash'), (3, 'Zoë')",
]


def test_vectors_round_trip_as_numpy_and_nearest_uses_the_index(pg_db_factory):
    db = pg_db_factory()
    store = ValueStore(db.url, "src-a")
    a, b = np.eye(384, dtype=np.float32)[:2]
    store.replace("t", "fp1", "m", [("c", "O'Brien", a), ("c", "x'); DROP TABLE t; --", b)])
    loaded = store.load(["t"])
    vals, vecs = loaded[("t", "c")]
    assert vals == ["O'Brien", "x'); DROP TABLE t; --"]
    assert isinstance(vecs, np.ndarray) and vecs.dtype == np.float32 and np.array_equal(vecs, np.vstack([a, b]))
    near = store.nearest("t", "c", b * 0.9, 2)
    assert [v for v, _ in near] == ["x'); DROP TABLE t; --", "O'Brien"]
    assert abs(near[0][1] - 0.1) < 1e-5
    assert store.state() == {"t": ("fp1", "m")}
    store.close()


def test_index_in_a_separate_database_serves_a_sqlite_file_and_keeps_sources_apart(
    pg_db_factory, tmp_path, monkeypatch
):
    index = pg_db_factory()
    monkeypatch.setenv(INDEX_URL_VAR, index.url)
    sources = []
    for name in ("one", "two"):
        path = tmp_path / f"{name}.sqlite"
        with sqlite3.connect(path) as conn:
            for s in NAMES:
                conn.execute(s)
            conn.execute(f"INSERT INTO people VALUES (4, 'only in {name}')")
        sources.append(SqliteDatabase(path))
    cats = [build_catalog(db) for db in sources]
    assert [c.backend for c in cats] == ["pgvector", "pgvector"]
    rows = index.execute("SELECT source, count(*) FROM actsagent.catalog_values GROUP BY source ORDER BY source").rows
    assert rows == sorted([[source_key(db.url), 4] for db in sources])
    t = sources[0].schema().table("people")
    assert cats[0].store.nearest("people", "name", cats[0].embedder.one("only in two"), 1)[0][0] == "only in one"
    assert "back\\slash" in cats[0].store.load(["people"])[("people", "name")][0]
    assert [v for v, _ in cats[0].nearest_values(t, t.column("name"), "obrien", 1)] == ["O'Brien"]
    for c in cats:
        c.store.close()


def test_an_index_of_the_older_layout_is_upgraded(pg_db_factory):
    db = pg_db_factory(
        [
            "CREATE EXTENSION IF NOT EXISTS vector",
            "CREATE SCHEMA actsagent",
            "CREATE TABLE actsagent.catalog_state (tbl text PRIMARY KEY, fingerprint text NOT NULL, "
            "model text NOT NULL, built_at timestamptz NOT NULL DEFAULT now())",
            "CREATE TABLE actsagent.catalog_values (id bigserial PRIMARY KEY, tbl text NOT NULL, "
            "col text NOT NULL, value text NOT NULL, embedding vector(384) NOT NULL)",
            "INSERT INTO actsagent.catalog_state (tbl, fingerprint, model) VALUES ('gone', 'x', 'm')",
            *NAMES,
        ]
    )
    cat = build_catalog(db)
    assert cat.backend == "pgvector"
    key = source_key(db.url)
    with psycopg.connect(db.url) as conn:
        state = conn.execute("SELECT source, tbl FROM actsagent.catalog_state ORDER BY tbl").fetchall()
        values = conn.execute("SELECT source, value FROM actsagent.catalog_values ORDER BY value").fetchall()
    assert state == [("", "gone"), (key, "people")]  # rows of the old layout are left to their (empty) source
    assert values == [(key, "O'Brien"), (key, "Zoë"), (key, "back\\slash")]
    cat.store.close()
