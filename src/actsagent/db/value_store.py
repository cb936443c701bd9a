"""The stored value index of the SafeQL catalog (``safeql.catalog``): pgvector through its own psycopg adapter.

Vectors travel as numpy arrays bound as parameters (``pgvector.psycopg.register_vector``), never as SQL
text; names and values are parameters too. The index lives in the schema ``actsagent`` of the
database it describes, or of ``ACTSAGENT_VALUE_INDEX_URL`` when set (one PostgreSQL with pgvector
serving many databases, read-only ones and SQLite files included): rows are keyed by ``source``, the
described database's identity without credentials.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from actsagent.db.admin import conninfo
from actsagent.errors import UserError

DIM = 384
INDEX_URL_VAR = "ACTSAGENT_VALUE_INDEX_URL"

_DDL = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    "CREATE SCHEMA IF NOT EXISTS actsagent",
    "CREATE TABLE IF NOT EXISTS actsagent.catalog_state (tbl text NOT NULL, fingerprint text NOT NULL, "
    "model text NOT NULL, built_at timestamptz NOT NULL DEFAULT now())",
    f"CREATE TABLE IF NOT EXISTS actsagent.catalog_values (id bigserial PRIMARY KEY, tbl text NOT NULL, "
    f"col text NOT NULL, value text NOT NULL, embedding vector({DIM}) NOT NULL)",
    # the source column came with the shared index; older installs keyed rows by table alone
    "ALTER TABLE actsagent.catalog_state ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT ''",
    "ALTER TABLE actsagent.catalog_values ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT ''",
    "ALTER TABLE actsagent.catalog_state DROP CONSTRAINT IF EXISTS catalog_state_pkey",
    "CREATE UNIQUE INDEX IF NOT EXISTS catalog_state_source_tbl ON actsagent.catalog_state (source, tbl)",
    "CREATE INDEX IF NOT EXISTS catalog_values_hnsw ON actsagent.catalog_values USING hnsw (embedding vector_l2_ops)",
    "CREATE INDEX IF NOT EXISTS catalog_values_col ON actsagent.catalog_values (source, tbl, col)",
]


def index_url(db_url: str) -> str:
    """Where the index of the database at ``db_url`` lives."""
    return os.environ.get(INDEX_URL_VAR) or db_url


def source_key(db_url: str) -> str:
    """The described database's identity: host, port and name of a PostgreSQL URL (no user or password),
    the path of a SQLite file."""
    try:
        info = conninfo(db_url)
    except UserError:
        return db_url
    return f"{info.get('host', '')}:{info.get('port', '')}/{info.get('dbname', '')}"


class ValueStore:
    """One autocommit connection to the index database; thread-safe; reconnects once after a lost connection
    (a sandbox copy terminates the sessions of its template)."""

    def __init__(self, url: str, source: str):
        self.url = url
        self.source = source
        self._lock = threading.Lock()
        self._conn = self._connect(setup=True)

    def _connect(self, *, setup: bool = False) -> psycopg.Connection:
        conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10, options="-c statement_timeout=60000")
        try:
            if setup:
                for stmt in _DDL:
                    conn.execute(stmt)
            register_vector(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self, fn):
        with self._lock:
            try:
                return fn(self._conn)
            except psycopg.OperationalError:
                if not self._conn.closed:
                    raise
                self._conn = self._connect()
                return fn(self._conn)

    def state(self) -> dict[str, tuple[str, str]]:
        """table -> (fingerprint, embedding model) of what is stored."""
        rows = self._run(
            lambda c: c.execute(
                "SELECT tbl, fingerprint, model FROM actsagent.catalog_state WHERE source = %s", [self.source]
            ).fetchall()
        )
        return {t: (f, m) for t, f, m in rows}

    def load(self, tables: list[str]) -> dict[tuple[str, str], tuple[list[str], np.ndarray]]:
        """(table, column) lowercased -> stored values and their vectors, in insertion order."""
        rows = self._run(
            lambda c: c.execute(
                "SELECT tbl, col, value, embedding FROM actsagent.catalog_values WHERE source = %s AND tbl = ANY(%s) "
                "ORDER BY id",
                [self.source, tables],
                binary=True,
            ).fetchall()
        )
        grouped: dict[tuple[str, str], tuple[list[str], list[np.ndarray]]] = {}
        for tbl, col, value, vec in rows:
            vals, vecs = grouped.setdefault((tbl.lower(), col.lower()), ([], []))
            vals.append(value)
            vecs.append(_array(vec))
        return {k: (vals, np.vstack(vecs)) for k, (vals, vecs) in grouped.items()}

    def replace(self, table: str, fingerprint: str, model: str, rows: Iterable[tuple[str, str, np.ndarray]]) -> None:
        """Store ``table``'s (column, value, vector) rows and its fingerprint, in one transaction."""
        batch = [(self.source, table, col, value, np.asarray(vec, dtype=np.float32)) for col, value, vec in rows]

        def write(c: psycopg.Connection) -> None:
            with c.transaction():
                c.execute("DELETE FROM actsagent.catalog_values WHERE source = %s AND tbl = %s", [self.source, table])
                with c.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO actsagent.catalog_values (source, tbl, col, value, embedding) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        batch,
                    )
                c.execute(
                    "INSERT INTO actsagent.catalog_state (source, tbl, fingerprint, model) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (source, tbl) DO UPDATE "
                    "SET fingerprint = excluded.fingerprint, model = excluded.model, built_at = now()",
                    [self.source, table, fingerprint, model],
                )

        self._run(write)

    def forget(self, table: str) -> None:
        def delete(c: psycopg.Connection) -> None:
            with c.transaction():
                for t in ("catalog_values", "catalog_state"):
                    c.execute(f"DELETE FROM actsagent.{t} WHERE source = %s AND tbl = %s", [self.source, table])

        self._run(delete)

    def nearest(self, table: str, column: str, vec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` stored values of table.column nearest to ``vec`` (L2, through the HNSW index)."""
        q = np.asarray(vec, dtype=np.float32)

        def search(c: psycopg.Connection) -> list[tuple[str, float]]:
            with c.transaction():
                c.execute("SET LOCAL statement_timeout = 2000")
                rows = c.execute(
                    "SELECT value, embedding <-> %s FROM actsagent.catalog_values WHERE source = %s "
                    "AND tbl = %s AND col = %s ORDER BY embedding <-> %s LIMIT %s",
                    [q, self.source, table, column, q, int(k)],
                ).fetchall()
            return [(str(v), float(d)) for v, d in rows]

        return self._run(search)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _array(vec) -> np.ndarray:
    """pgvector >= 0.4 loads a ``Vector``; older releases loaded the numpy array itself."""
    return np.asarray(vec.to_numpy() if hasattr(vec, "to_numpy") else vec, dtype=np.float32)
