"""The embedding catalog the search ranks against: tables, columns (name and comment), stored text
values (capped per column) and the engine's functions.

Names live in memory (a few hundred vectors). Values can be many: in PostgreSQL they are stored with
pgvector in the schema ``actsagent`` under an HNSW index, built once and refreshed per table when its
fingerprint (columns and row count) changes; for SQLite, and for PostgreSQL roles that may not create
that schema, an in-process numpy index holds them. Vectors themselves are cached on disk by ``Embedder``.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from actsagent.db.base import Database
from actsagent.safeql.embeddings import Embedder, humanize, lexical_distance, shared_embedder
from actsagent.schema.model import ColumnInfo, SchemaInfo, TableInfo

VALUE_CAP = 200          # distinct text values kept per column (most frequent first)
VALUE_MAX_LEN = 80
TEXT_HINTS = ("text", "char", "clob", "string", "name", "citext")


def is_text_type(t: str) -> bool:
    t = (t or "").lower()
    return t == "" or any(h in t for h in TEXT_HINTS)


def qident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class ColumnRef:
    table: TableInfo
    column: ColumnInfo


@dataclass
class _ValueIndex:
    values: list[str]
    vecs: np.ndarray


@dataclass
class Catalog:
    db: Database
    schema: SchemaInfo
    embedder: Embedder
    backend: str = "numpy"
    build_ms: float = 0.0
    tables_refreshed: int = 0
    table_vecs: np.ndarray = field(default_factory=lambda: np.zeros((0, 384), np.float32))
    columns: list[ColumnRef] = field(default_factory=list)
    column_vecs: np.ndarray = field(default_factory=lambda: np.zeros((0, 384), np.float32))
    functions: dict[str, set[int]] = field(default_factory=dict)  # name -> arities (-1: variadic)
    function_names: list[str] = field(default_factory=list)
    function_vecs: np.ndarray | None = None
    values: dict[tuple[str, str], _ValueIndex] = field(default_factory=dict)

    # ----- lookups -------------------------------------------------------------------------
    def table(self, name: str) -> TableInfo | None:
        return self.schema.table(name)

    def token_distance(self, a: str, b: str) -> float:
        """Distance of two tokens: the embedding distance, or the lexical one when smaller."""
        if a.lower() == b.lower():  # the same name up to case: an exact match, only its quoting may differ
            return 0.0
        emb = self.embedder.distance(humanize(a) if _identifier_like(a) else a,
                                     humanize(b) if _identifier_like(b) else b)
        return min(emb, lexical_distance(a, b))

    def nearest_tables(self, name: str, k: int, exclude: set[str] = frozenset()) -> list[tuple[TableInfo, float]]:
        if not self.schema.tables:
            return []
        q = self.embedder.one(humanize(name))
        d = np.linalg.norm(self.table_vecs - q, axis=1)
        scored = [(t, min(float(di), lexical_distance(name, t.name))) for t, di in zip(self.schema.tables, d)
                  if t.name.lower() not in exclude]
        return sorted(scored, key=lambda x: x[1])[:k]

    def nearest_columns(self, name: str, k: int | None = None, tables: list[TableInfo] | None = None
                        ) -> list[tuple[ColumnRef, float]]:
        """Columns nearest to ``name``; ``tables`` restricts to those tables (all when None)."""
        if not self.columns:
            return []
        q = self.embedder.one(humanize(name))
        d = np.linalg.norm(self.column_vecs - q, axis=1)
        allowed = None if tables is None else {id(t) for t in tables}
        scored = [(c, min(float(di), lexical_distance(name, c.column.name))) for c, di in zip(self.columns, d)
                  if allowed is None or id(c.table) in allowed]
        scored.sort(key=lambda x: x[1])
        return scored if k is None else scored[:k]

    def nearest_functions(self, name: str, k: int, arity: int | None = None) -> list[tuple[str, float]]:
        if not self.function_names:
            return []
        if self.function_vecs is None:
            self.function_vecs = self.embedder.embed([humanize(n) for n in self.function_names])
        q = self.embedder.one(humanize(name))
        d = np.linalg.norm(self.function_vecs - q, axis=1)
        out = []
        for fname, di in zip(self.function_names, d):
            ar = self.functions.get(fname, set())
            if arity is not None and ar and arity not in ar and -1 not in ar:
                continue
            if fname.lower() == name.lower():
                continue
            out.append((fname, min(float(di), lexical_distance(name, fname))))
        return sorted(out, key=lambda x: x[1])[:k]

    def has_function(self, name: str) -> bool:
        return name.lower() in self.functions

    def column_values(self, table: str, column: str) -> list[str]:
        idx = self.values.get((table.lower(), column.lower()))
        return idx.values if idx else []

    def nearest_values(self, table: TableInfo, column: ColumnInfo, literal: str, k: int
                       ) -> list[tuple[str, float]]:
        """Stored values of ``table.column`` nearest to ``literal``.

        Exact matches up to case and spacing are asked from the database itself (no cap applies
        there); the rest come from the vector index of the capped value sample.
        """
        out: dict[str, float] = {}
        for v in self._lexical_matches(table, column, literal):
            out[v] = lexical_distance(literal, v)
        qv = self.embedder.one(literal)
        if self.backend == "pgvector":
            for v, d in self._pg_nearest_values(table, column, qv, k):
                out.setdefault(v, min(d, lexical_distance(literal, v)))
        idx = self.values.get((table.name.lower(), column.name.lower()))
        if idx is not None and len(idx.values):
            d = np.linalg.norm(idx.vecs - qv, axis=1)
            for v, di in zip(idx.values, d):
                dist = min(float(di), lexical_distance(literal, v))
                if v not in out or dist < out[v]:
                    out[v] = dist
        out.pop(literal, None)
        return sorted(out.items(), key=lambda x: x[1])[:k]

    def _lexical_matches(self, table: TableInfo, column: ColumnInfo, literal: str) -> list[str]:
        squashed = "".join(literal.lower().split()).replace("'", "''")
        col = qident(column.name)
        tbl = _table_sql(table)
        sql = (f"SELECT DISTINCT {col} FROM {tbl} WHERE lower(replace({col}, ' ', '')) = '{squashed}' "
               f"LIMIT 5")
        res = self.db.execute(sql, max_rows=5, timeout_s=2)
        return [str(r[0]) for r in res.rows if r[0] is not None] if res.ok else []

    def _pg_nearest_values(self, table: TableInfo, column: ColumnInfo, qv: np.ndarray, k: int
                           ) -> list[tuple[str, float]]:
        lit = _vec_literal(qv)
        sql = (f"SELECT value, embedding <-> '{lit}'::vector FROM actsagent.catalog_values "
               f"WHERE tbl = {_str(table.name)} AND col = {_str(column.name)} "
               f"ORDER BY embedding <-> '{lit}'::vector LIMIT {int(k)}")
        res = self.db.execute(sql, max_rows=k, timeout_s=2)
        return [(str(v), float(d)) for v, d in res.rows] if res.ok else []



def _identifier_like(s: str) -> bool:
    return " " not in s


def _str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _vec_literal(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in v.tolist()) + "]"


def _table_sql(t: TableInfo) -> str:
    return f"{qident(t.schema_name)}.{qident(t.name)}" if t.schema_name else qident(t.name)


def _fingerprint(t: TableInfo) -> str:
    parts = [t.name, str(t.row_estimate)] + [f"{c.name}:{c.type}:{c.comment}" for c in t.columns]
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


# ----- building --------------------------------------------------------------------------------

_CATALOGS: dict[str, Catalog] = {}
_LOCK = threading.Lock()


def get_catalog(db: Database, *, refresh: bool = False, embedder: Embedder | None = None,
                use_pgvector: bool = True) -> Catalog:
    """The catalog of ``db``, built on first use and kept per database URL (and per-caller settings) for the
    process."""
    with _LOCK:
        cat = _CATALOGS.get(db.cache_key)
        if cat is not None and not refresh:
            cat.db = db
            return cat
        cat = build_catalog(db, embedder=embedder, use_pgvector=use_pgvector, previous=cat)
        _CATALOGS[db.cache_key] = cat
        return cat


def build_catalog(db: Database, *, embedder: Embedder | None = None, use_pgvector: bool = True,
                  previous: Catalog | None = None) -> Catalog:
    start = time.perf_counter()
    emb = embedder or shared_embedder()
    schema = db.schema(refresh=previous is not None)
    cat = Catalog(db=db, schema=schema, embedder=emb)
    cat.table_vecs = emb.embed([humanize(t.name) + (f" {t.comment}" if t.comment else "") for t in schema.tables])
    cat.columns = [ColumnRef(t, c) for t in schema.tables for c in t.columns]
    cat.column_vecs = emb.embed([humanize(c.column.name) + (f" {c.column.comment}" if c.column.comment else "")
                                 for c in cat.columns])
    _load_functions(db, cat)
    prev_fp = {t.name: _fingerprint(t) for t in previous.schema.tables} if previous else {}
    stored: dict[tuple[str, str], _ValueIndex] = {}
    writer = None
    if db.dialect == "postgres" and use_pgvector:
        try:
            writer = _pg_writer(db)
            stored = _pg_load_unchanged(writer, cat)
            cat.backend = "pgvector"
        except Exception:  # no CREATE privilege or no pgvector: the in-process index still serves
            writer, cat.backend = None, "numpy"
    changed: set[str] = set()
    for t in schema.tables:
        for c in t.columns:
            if not is_text_type(c.type):
                continue
            key = (t.name.lower(), c.name.lower())
            if previous and prev_fp.get(t.name) == _fingerprint(t) and key in previous.values:
                cat.values[key] = previous.values[key]
            elif key in stored:
                cat.values[key] = stored[key]
            else:
                changed.add(t.name)
                vals = _distinct_values(db, t, c)
                if vals:
                    cat.values[key] = _ValueIndex(vals, emb.embed(vals))
    if writer is not None:
        try:
            _pg_store_changed(writer, cat)
        except Exception:
            cat.backend = "numpy"
        finally:
            writer.close()
    cat.tables_refreshed = len(changed)
    cat.build_ms = (time.perf_counter() - start) * 1000
    return cat


def _distinct_values(db: Database, t: TableInfo, c: ColumnInfo) -> list[str]:
    col = qident(c.name)
    sql = (f"SELECT {col}, count(*) FROM {_table_sql(t)} WHERE {col} IS NOT NULL "
           f"GROUP BY {col} ORDER BY count(*) DESC LIMIT {VALUE_CAP}")
    res = db.execute(sql, max_rows=VALUE_CAP, timeout_s=20)
    if not res.ok:
        return []
    out = []
    for v, _n in res.rows:
        if isinstance(v, bytes | bytearray | memoryview):
            continue
        s = str(v)
        if 0 < len(s) <= VALUE_MAX_LEN and not _numeric(s):
            out.append(s)
    return out


def _numeric(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _load_functions(db: Database, cat: Catalog) -> None:
    if db.dialect == "sqlite":
        res = db.execute("SELECT name, narg FROM pragma_function_list", max_rows=100000)
        rows = res.rows if res.ok else []
    else:
        res = db.execute("SELECT proname, pronargs FROM pg_proc WHERE prokind IN ('f','a','w') "
                         "AND pronamespace = 'pg_catalog'::regnamespace AND proname !~ '^(_|pg_)' "
                         "AND proname !~ '(_in|_out|recv|send|support|handler|_ops)$'", max_rows=100000)
        rows = res.rows if res.ok else []
    funcs: dict[str, set[int]] = {}
    for name, narg in rows:
        funcs.setdefault(str(name).lower(), set()).add(int(narg))
    cat.functions = funcs
    cat.function_names = sorted(funcs)
    cat.function_vecs = None  # embedded on first use: most queries never need a function name
    if db.dialect == "postgres":
        from actsagent.safeql.quoting import add_reserved

        kw = db.execute("SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'T')", max_rows=10000)
        if kw.ok:
            add_reserved("postgres", [r[0] for r in kw.rows])


_PG_DDL = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    "CREATE SCHEMA IF NOT EXISTS actsagent",
    "CREATE TABLE IF NOT EXISTS actsagent.catalog_state (tbl text PRIMARY KEY, fingerprint text NOT NULL, "
    "model text NOT NULL, built_at timestamptz NOT NULL DEFAULT now())",
    "CREATE TABLE IF NOT EXISTS actsagent.catalog_values (id bigserial PRIMARY KEY, tbl text NOT NULL, "
    "col text NOT NULL, value text NOT NULL, embedding vector(384) NOT NULL)",
    "CREATE INDEX IF NOT EXISTS catalog_values_hnsw ON actsagent.catalog_values "
    "USING hnsw (embedding vector_l2_ops)",
    "CREATE INDEX IF NOT EXISTS catalog_values_col ON actsagent.catalog_values (tbl, col)",
]


def _pg_writer(db: Database) -> Database:
    from actsagent.db.postgres import PostgresDatabase

    writer = PostgresDatabase(db.url, writable=True, pool_size=1)
    try:
        for stmt in _PG_DDL:
            _must(writer.execute(stmt, read_only=False, timeout_s=60))
    except Exception:
        writer.close()
        raise
    return writer


def _pg_state(writer: Database) -> dict[str, tuple[str, str]]:
    res = _must(writer.execute("SELECT tbl, fingerprint, model FROM actsagent.catalog_state", max_rows=1_000_000))
    return {r[0]: (r[1], r[2]) for r in res.rows}


def _pg_load_unchanged(writer: Database, cat: Catalog) -> dict[tuple[str, str], _ValueIndex]:
    """Values of tables whose stored fingerprint still matches: read back, not recomputed."""
    state = _pg_state(writer)
    model = cat.embedder.model_path or "hub"
    keep = [t.name for t in cat.schema.tables if state.get(t.name) == (_fingerprint(t), model)]
    out: dict[tuple[str, str], _ValueIndex] = {}
    if not keep:
        return out
    names = ",".join(_str(n) for n in keep)
    res = _must(writer.execute(f"SELECT tbl, col, value, embedding::text FROM actsagent.catalog_values "
                               f"WHERE tbl IN ({names}) ORDER BY id", max_rows=10_000_000, timeout_s=60))
    grouped: dict[tuple[str, str], tuple[list[str], list[np.ndarray]]] = {}
    for tbl, col, value, vec in res.rows:
        vals, vecs = grouped.setdefault((tbl.lower(), col.lower()), ([], []))
        vals.append(value)
        vecs.append(np.asarray(vec.strip("[]").split(","), dtype=np.float32))
    for key, (vals, vecs) in grouped.items():
        out[key] = _ValueIndex(vals, np.vstack(vecs))
    # a table with no stored values is unchanged too: mark its text columns as known-empty
    for t in cat.schema.tables:
        if t.name in keep:
            for c in t.columns:
                if is_text_type(c.type):
                    out.setdefault((t.name.lower(), c.name.lower()), _ValueIndex([], np.zeros((0, 384), np.float32)))
    return out


def _pg_store_changed(writer: Database, cat: Catalog) -> None:
    """Rewrite ``actsagent.catalog_values`` for tables whose fingerprint moved; drop vanished tables."""
    stored = _pg_state(writer)
    model = cat.embedder.model_path or "hub"
    current = {t.name: _fingerprint(t) for t in cat.schema.tables}
    for gone in set(stored) - set(current):
        _must(writer.execute(f"DELETE FROM actsagent.catalog_values WHERE tbl = {_str(gone)}", read_only=False))
        _must(writer.execute(f"DELETE FROM actsagent.catalog_state WHERE tbl = {_str(gone)}", read_only=False))
    for t in cat.schema.tables:
        if stored.get(t.name) == (current[t.name], model):
            continue
        _must(writer.execute(f"DELETE FROM actsagent.catalog_values WHERE tbl = {_str(t.name)}", read_only=False))
        rows = []
        for c in t.columns:
            idx = cat.values.get((t.name.lower(), c.name.lower()))
            if idx is None:
                continue
            rows += [f"({_str(t.name)}, {_str(c.name)}, {_str(v)}, '{_vec_literal(vec)}')"
                     for v, vec in zip(idx.values, idx.vecs)]
        for i in range(0, len(rows), 200):
            _must(writer.execute("INSERT INTO actsagent.catalog_values (tbl, col, value, embedding) VALUES "
                                 + ",".join(rows[i:i + 200]), read_only=False, timeout_s=60))
        _must(writer.execute(
            f"INSERT INTO actsagent.catalog_state (tbl, fingerprint, model) VALUES "
            f"({_str(t.name)}, {_str(current[t.name])}, {_str(model)}) ON CONFLICT (tbl) DO UPDATE "
            f"SET fingerprint = excluded.fingerprint, model = excluded.model, built_at = now()",
            read_only=False))


def _must(res):
    if not res.ok:
        raise RuntimeError(res.message)
    return res
