"""The embedding catalog the search ranks against: tables, columns (name and comment), stored text
values (capped per column) and the engine's functions.

Names live in memory (a few hundred vectors). Values can be many: in PostgreSQL they are stored with
pgvector (``db/value_store.py``: its psycopg adapter, vectors as numpy parameters) in the schema ``actsagent``
under an HNSW index, built once and refreshed per table when its fingerprint (columns and row count)
changes; ``ACTSAGENT_VALUE_INDEX_URL`` puts that index in another PostgreSQL database (then SQLite files
use it too). Without one (SQLite, roles that may not create the schema, no pgvector) an in-process numpy
index holds them. Vectors themselves are cached on disk by ``Embedder``.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Set
from dataclasses import dataclass, field

import numpy as np
from sqlglot import exp

from actsagent.db.base import Database
from actsagent.db.value_store import INDEX_URL_VAR, ValueStore, index_url, source_key
from actsagent.safeql.embeddings import Embedder, humanize, lexical_distance, shared_embedder
from actsagent.schema.model import ColumnInfo, SchemaInfo, TableInfo

VALUE_CAP = 200  # distinct text values kept per column (most frequent first)
VALUE_MAX_LEN = 80
TEXT_HINTS = ("text", "char", "clob", "string", "name", "citext")


def is_text_type(t: str) -> bool:
    t = (t or "").lower()
    return t == "" or any(h in t for h in TEXT_HINTS)


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
    store: ValueStore | None = None  # the pgvector index, when the backend is "pgvector"

    # ----- lookups -------------------------------------------------------------------------
    def table(self, name: str) -> TableInfo | None:
        return self.schema.table(name)

    def token_distance(self, a: str, b: str) -> float:
        """Distance of two tokens: the embedding distance, or the lexical one when smaller."""
        if a.lower() == b.lower():  # the same name up to case: an exact match, only its quoting may differ
            return 0.0
        emb = self.embedder.distance(
            humanize(a) if _identifier_like(a) else a, humanize(b) if _identifier_like(b) else b
        )
        return min(emb, lexical_distance(a, b))

    def nearest_tables(self, name: str, k: int, exclude: Set[str] = frozenset()) -> list[tuple[TableInfo, float]]:
        if not self.schema.tables:
            return []
        d = self.embedder.distances(humanize(name), self.table_vecs)
        scored = [
            (t, min(float(di), lexical_distance(name, t.name)))
            for t, di in zip(self.schema.tables, d)
            if t.name.lower() not in exclude
        ]
        return sorted(scored, key=lambda x: x[1])[:k]

    def nearest_columns(
        self, name: str, k: int | None = None, tables: list[TableInfo] | None = None
    ) -> list[tuple[ColumnRef, float]]:
        """Columns nearest to ``name``; ``tables`` restricts to those tables (all when None)."""
        if not self.columns:
            return []
        d = self.embedder.distances(humanize(name), self.column_vecs)
        allowed = None if tables is None else {id(t) for t in tables}
        scored = [
            (c, min(float(di), lexical_distance(name, c.column.name)))
            for c, di in zip(self.columns, d)
            if allowed is None or id(c.table) in allowed
        ]
        scored.sort(key=lambda x: x[1])
        return scored if k is None else scored[:k]

    def nearest_functions(self, name: str, k: int, arity: int | None = None) -> list[tuple[str, float]]:
        if not self.function_names:
            return []
        if self.function_vecs is None:
            self.function_vecs = self.embedder.embed([humanize(n) for n in self.function_names])
        d = self.embedder.distances(humanize(name), self.function_vecs)
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

    def nearest_values(self, table: TableInfo, column: ColumnInfo, literal: str, k: int) -> list[tuple[str, float]]:
        """Stored values of ``table.column`` nearest to ``literal``.

        Exact matches up to case and spacing are asked from the database itself (no cap applies
        there); the rest come from the vector index of the capped value sample.
        """
        out: dict[str, float] = {}
        for v in self._lexical_matches(table, column, literal):
            out[v] = lexical_distance(literal, v)
        if self.backend == "pgvector":
            for v, d in self._pg_nearest_values(table, column, self.embedder.one(literal), k):
                out.setdefault(v, min(d, lexical_distance(literal, v)))
        idx = self.values.get((table.name.lower(), column.name.lower()))
        if idx is not None and len(idx.values):
            dv = self.embedder.distances(literal, idx.vecs)
            for v, di in zip(idx.values, dv):
                dist = min(float(di), lexical_distance(literal, v))
                if v not in out or dist < out[v]:
                    out[v] = dist
        out.pop(literal, None)
        return sorted(out.items(), key=lambda x: x[1])[:k]

    def _lexical_matches(self, table: TableInfo, column: ColumnInfo, literal: str) -> list[str]:
        d = self.db.dialect
        squashed = exp.Literal.string("".join(literal.lower().split())).sql(d)
        col = column.sql_name(d)
        sql = (
            f"SELECT DISTINCT {col} FROM {table.sql_name(d)} WHERE lower(replace({col}, ' ', '')) = {squashed} LIMIT 5"
        )
        res = self.db.execute(sql, max_rows=5, timeout_s=2)
        return [str(r[0]) for r in res.rows if r[0] is not None] if res.ok else []

    def _pg_nearest_values(
        self, table: TableInfo, column: ColumnInfo, qv: np.ndarray, k: int
    ) -> list[tuple[str, float]]:
        if self.store is None:
            return []
        try:
            return self.store.nearest(table.name, column.name, qv, k)
        except Exception:
            return []


def _identifier_like(s: str) -> bool:
    return " " not in s


def _fingerprint(t: TableInfo) -> str:
    parts = [t.name, str(t.row_estimate)] + [f"{c.name}:{c.type}:{c.comment}" for c in t.columns]
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


# ----- building --------------------------------------------------------------------------------

_CATALOGS: dict[str, Catalog] = {}
_LOCK = threading.Lock()


def get_catalog(
    db: Database, *, refresh: bool = False, embedder: Embedder | None = None, use_pgvector: bool = True
) -> Catalog:
    """The catalog of ``db``, built on first use and kept per database URL (and per-caller settings) for the
    process."""
    with _LOCK:
        cat = _CATALOGS.get(db.cache_key)
        if cat is not None and not refresh:
            cat.db = db
            return cat
        previous = cat
        cat = build_catalog(db, embedder=embedder, use_pgvector=use_pgvector, previous=previous)
        if previous is not None and previous.store is not None and previous.store is not cat.store:
            previous.store.close()
        _CATALOGS[db.cache_key] = cat
        return cat


def build_catalog(
    db: Database, *, embedder: Embedder | None = None, use_pgvector: bool = True, previous: Catalog | None = None
) -> Catalog:
    start = time.perf_counter()
    emb = embedder or shared_embedder()
    schema = db.schema(refresh=previous is not None)
    cat = Catalog(db=db, schema=schema, embedder=emb)
    cat.table_vecs = emb.embed([humanize(t.name) + (f" {t.comment}" if t.comment else "") for t in schema.tables])
    cat.columns = [ColumnRef(t, c) for t in schema.tables for c in t.columns]
    cat.column_vecs = emb.embed(
        [humanize(c.column.name) + (f" {c.column.comment}" if c.column.comment else "") for c in cat.columns]
    )
    _load_functions(db, cat)
    prev_fp = {t.name: _fingerprint(t) for t in previous.schema.tables} if previous else {}
    stored: dict[tuple[str, str], _ValueIndex] = {}
    # never store placeholder vectors (the embedding model may be missing offline)
    if use_pgvector and emb.available and (db.dialect == "postgres" or os.environ.get(INDEX_URL_VAR)):
        try:
            cat.store = ValueStore(index_url(db.url), source_key(db.url))
            stored = _pg_load_unchanged(cat.store, cat)
            cat.backend = "pgvector"
        except Exception:
            _drop_store(cat)
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
    if cat.store is not None:
        try:
            _pg_store_changed(cat.store, cat)
        except Exception:
            _drop_store(cat)
    cat.tables_refreshed = len(changed)
    cat.build_ms = (time.perf_counter() - start) * 1000
    return cat


def _drop_store(cat: Catalog) -> None:
    if cat.store is not None:
        cat.store.close()
    cat.store, cat.backend = None, "numpy"


def _distinct_values(db: Database, t: TableInfo, c: ColumnInfo) -> list[str]:
    col = c.sql_name(db.dialect)
    sql = (
        f"SELECT {col}, count(*) FROM {t.sql_name(db.dialect)} WHERE {col} IS NOT NULL "
        f"GROUP BY {col} ORDER BY count(*) DESC LIMIT {VALUE_CAP}"
    )
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
        # one JSON object {name: [argument counts]}: the ~2,000 functions as single rows would each be converted
        # and validated on their own (most of the catalog's build time on a small database)
        res = db.execute(
            "SELECT json_object_agg(proname, nargs) FROM (SELECT proname, array_agg(DISTINCT pronargs::int) AS nargs "
            "FROM pg_proc WHERE prokind IN ('f','a','w') "
            "AND pronamespace = 'pg_catalog'::regnamespace AND proname !~ '^(_|pg_)' "
            "AND proname !~ '(_in|_out|recv|send|support|handler|_ops)$' GROUP BY proname) f"
        )
        found = res.rows[0][0] if res.ok and res.rows and isinstance(res.rows[0][0], dict) else {}
        rows = [[name, n] for name, nargs in found.items() for n in nargs]
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


def _pg_load_unchanged(store: ValueStore, cat: Catalog) -> dict[tuple[str, str], _ValueIndex]:
    """Values of tables whose stored fingerprint still matches: read back, not recomputed."""
    state = store.state()
    model = cat.embedder.model_path or "hub"
    keep = [t.name for t in cat.schema.tables if state.get(t.name) == (_fingerprint(t), model)]
    if not keep:
        return {}
    out = {key: _ValueIndex(vals, vecs) for key, (vals, vecs) in store.load(keep).items()}
    # a table with no stored values is unchanged too: mark its text columns as known-empty
    for t in cat.schema.tables:
        if t.name in keep:
            for c in t.columns:
                if is_text_type(c.type):
                    out.setdefault((t.name.lower(), c.name.lower()), _ValueIndex([], np.zeros((0, 384), np.float32)))
    return out


def _pg_store_changed(store: ValueStore, cat: Catalog) -> None:
    """Rewrite the stored values of tables whose fingerprint moved; forget vanished tables."""
    stored = store.state()
    model = cat.embedder.model_path or "hub"
    current = {t.name: _fingerprint(t) for t in cat.schema.tables}
    for gone in set(stored) - set(current):
        store.forget(gone)
    for t in cat.schema.tables:
        if stored.get(t.name) == (current[t.name], model):
            continue
        rows = []
        for c in t.columns:
            idx = cat.values.get((t.name.lower(), c.name.lower()))
            if idx is not None:
                rows += [(c.name, v, vec) for v, vec in zip(idx.values, idx.vecs)]
        store.replace(t.name, current[t.name], model, rows)
