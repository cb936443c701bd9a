"""Where a knowledge base lives and how its vectors are searched.

PostgreSQL: in the database it describes, schema ``actsagent_kb`` (hidden from introspection):
the whole knowledge base as one JSON document, and two levels of pgvector rows - one per table,
one per column keyed by its table - plus one per verified example. Retrieval asks pgvector for
the nearest tables, then for the nearest columns *of the chosen tables*.

SQLite (or a PostgreSQL role that may not create the schema): a JSON file under
``home_dir()/kb`` and an in-process numpy index built from the same texts (vectors come from the
embedder's disk cache, so a rebuild of the index is cheap).
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

from actsagent.config import home_dir
from actsagent.db.base import Database
from actsagent.errors import UserError
from actsagent.kb.models import ColumnEntry, KnowledgeBase, TableEntry
from actsagent.safeql.embeddings import Embedder

SCHEMA = "actsagent_kb"
DIM = 384


def table_text(t: TableEntry) -> str:
    return f"{t.readable or t.name}. {t.description}"


def column_text(t: TableEntry, c: ColumnEntry) -> str:
    return f"{c.readable or c.name} ({t.readable or t.name}). {c.description}"


# ----- vector search ----------------------------------------------------------------------------------


class KbIndex(ABC):
    """Cosine similarities of a question vector to tables, to the columns of given tables, to examples."""

    backend: str

    @abstractmethod
    def table_scores(self, qvec: np.ndarray) -> dict[str, float]: ...

    @abstractmethod
    def column_scores(self, qvec: np.ndarray, tables: list[str]) -> dict[tuple[str, str], float]: ...

    @abstractmethod
    def example_scores(self, qvec: np.ndarray) -> dict[str, float]: ...


class NumpyIndex(KbIndex):
    backend = "numpy"

    def __init__(self, kb: KnowledgeBase, embedder: Embedder) -> None:
        self.tables = [t.name for t in kb.tables]
        self.table_vecs = embedder.embed([table_text(t) for t in kb.tables])
        self.columns = [(t.name, c.name) for t in kb.tables for c in t.columns]
        self.column_vecs = embedder.embed([column_text(t, c) for t in kb.tables for c in t.columns])
        ex = kb.active_examples()
        self.examples = [e.id for e in ex]
        self.example_vecs = embedder.embed([e.question for e in ex])

    def table_scores(self, qvec: np.ndarray) -> dict[str, float]:
        return dict(zip(self.tables, (self.table_vecs @ qvec).tolist())) if self.tables else {}

    def column_scores(self, qvec: np.ndarray, tables: list[str]) -> dict[tuple[str, str], float]:
        want = {t.lower() for t in tables}
        if not self.columns:
            return {}
        sims = (self.column_vecs @ qvec).tolist()
        return {k: s for k, s in zip(self.columns, sims) if k[0].lower() in want}

    def example_scores(self, qvec: np.ndarray) -> dict[str, float]:
        return dict(zip(self.examples, (self.example_vecs @ qvec).tolist())) if self.examples else {}


class PgVectorIndex(KbIndex):
    """Two-level search in pgvector: nearest tables, then nearest columns within the chosen tables."""

    backend = "pgvector"

    def __init__(self, db: Database) -> None:
        self.db = db

    def _rows(self, sql: str) -> list[list]:
        res = self.db.execute(sql, max_rows=1_000_000, timeout_s=30)
        if not res.ok:
            raise UserError(f"knowledge base search failed: {res.message}")
        return res.rows

    def table_scores(self, qvec: np.ndarray) -> dict[str, float]:
        lit = _vec(qvec)
        return {
            n: float(s)
            for n, s in self._rows(
                f"SELECT name, 1 - (embedding <=> '{lit}'::vector) FROM {SCHEMA}.kb_tables "
                f"ORDER BY embedding <=> '{lit}'::vector"
            )
        }

    def column_scores(self, qvec: np.ndarray, tables: list[str]) -> dict[tuple[str, str], float]:
        if not tables:
            return {}
        lit = _vec(qvec)
        names = ",".join(_str(t) for t in tables)
        return {
            (t, c): float(s)
            for t, c, s in self._rows(
                f"SELECT table_name, column_name, 1 - (embedding <=> '{lit}'::vector) FROM {SCHEMA}.kb_columns "
                f"WHERE table_name IN ({names}) ORDER BY embedding <=> '{lit}'::vector"
            )
        }

    def example_scores(self, qvec: np.ndarray) -> dict[str, float]:
        lit = _vec(qvec)
        return {
            i: float(s)
            for i, s in self._rows(
                f"SELECT id, 1 - (embedding <=> '{lit}'::vector) FROM {SCHEMA}.kb_examples WHERE status = 'active' "
                f"ORDER BY embedding <=> '{lit}'::vector LIMIT 50"
            )
        }


def _vec(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in np.asarray(v, dtype=np.float32).tolist()) + "]"


def _str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


# ----- persistence ------------------------------------------------------------------------------------


class KbStore(ABC):
    backend: str
    location: str

    @abstractmethod
    def load(self) -> KnowledgeBase | None: ...

    @abstractmethod
    def save(self, kb: KnowledgeBase, embedder: Embedder) -> None: ...

    @abstractmethod
    def index(self, kb: KnowledgeBase, embedder: Embedder) -> KbIndex: ...


class FileStore(KbStore):
    backend = "file"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)

    def load(self) -> KnowledgeBase | None:
        if not self.path.is_file():
            return None
        try:
            return KnowledgeBase.model_validate_json(self.path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise UserError(
                f"knowledge base file {self.path} is damaged ({str(e).splitlines()[0]}); "
                f"rebuild it with `actsagent kb build --replace`"
            ) from e

    def save(self, kb: KnowledgeBase, embedder: Embedder) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(kb.model_dump_json(indent=1), encoding="utf-8")
        tmp.replace(self.path)  # atomic: a crash leaves the old file

    def index(self, kb: KnowledgeBase, embedder: Embedder) -> KbIndex:
        return NumpyIndex(kb, embedder)


_PG_DDL = [
    "CREATE EXTENSION IF NOT EXISTS vector SCHEMA public",  # never the first schema of a session's path (views')
    f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
    f"CREATE TABLE IF NOT EXISTS {SCHEMA}.kb_doc (id int PRIMARY KEY CHECK (id = 1), doc jsonb NOT NULL, "
    f"fingerprint text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())",
    f"CREATE TABLE IF NOT EXISTS {SCHEMA}.kb_tables (name text PRIMARY KEY, text text NOT NULL, "
    f"embedding vector({DIM}) NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {SCHEMA}.kb_columns (table_name text NOT NULL, column_name text NOT NULL, "
    f"text text NOT NULL, embedding vector({DIM}) NOT NULL, PRIMARY KEY (table_name, column_name))",
    f"CREATE TABLE IF NOT EXISTS {SCHEMA}.kb_examples (id text PRIMARY KEY, question text NOT NULL, "
    f"status text NOT NULL, embedding vector({DIM}) NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS kb_tables_hnsw ON {SCHEMA}.kb_tables USING hnsw (embedding vector_cosine_ops)",
    f"CREATE INDEX IF NOT EXISTS kb_columns_hnsw ON {SCHEMA}.kb_columns USING hnsw (embedding vector_cosine_ops)",
]


class PgStore(KbStore):
    backend = "pgvector"

    def __init__(self, db: Database) -> None:
        self.db = db
        self.location = f"{db.name} (schema {SCHEMA})"

    def load(self) -> KnowledgeBase | None:
        res = self.db.execute(f"SELECT doc::text FROM {SCHEMA}.kb_doc WHERE id = 1")
        if not res.ok or not res.rows:
            return None
        return KnowledgeBase.model_validate_json(res.rows[0][0])

    def save(self, kb: KnowledgeBase, embedder: Embedder) -> None:
        from actsagent.db.postgres import PostgresDatabase

        writer = PostgresDatabase(self.db.url, writable=True, pool_size=1, single_statement=False)
        try:
            stmts = list(_PG_DDL)
            stmts += [
                f"DELETE FROM {SCHEMA}.kb_tables",
                f"DELETE FROM {SCHEMA}.kb_columns",
                f"DELETE FROM {SCHEMA}.kb_examples",
            ]
            tvecs = embedder.embed([table_text(t) for t in kb.tables])
            rows = [f"({_str(t.name)}, {_str(table_text(t))}, '{_vec(v)}')" for t, v in zip(kb.tables, tvecs)]
            stmts += _inserts(f"{SCHEMA}.kb_tables (name, text, embedding)", rows)
            pairs = [(t, c) for t in kb.tables for c in t.columns]
            cvecs = embedder.embed([column_text(t, c) for t, c in pairs])
            rows = [
                f"({_str(t.name)}, {_str(c.name)}, {_str(column_text(t, c))}, '{_vec(v)}')"
                for (t, c), v in zip(pairs, cvecs)
            ]
            stmts += _inserts(f"{SCHEMA}.kb_columns (table_name, column_name, text, embedding)", rows)
            evecs = embedder.embed([e.question for e in kb.examples])
            rows = [
                f"({_str(e.id)}, {_str(e.question)}, {_str(e.status)}, '{_vec(v)}')" for e, v in zip(kb.examples, evecs)
            ]
            stmts += _inserts(f"{SCHEMA}.kb_examples (id, question, status, embedding)", rows)
            doc = _str(kb.model_dump_json())
            stmts.append(
                f"INSERT INTO {SCHEMA}.kb_doc (id, doc, fingerprint) VALUES (1, {doc}::jsonb, "
                f"{_str(kb.fingerprint)}) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, "
                f"fingerprint = excluded.fingerprint, updated_at = now()"
            )
            res = writer.execute(";\n".join(stmts), read_only=False, timeout_s=120)  # one transaction
            if not res.ok:
                raise UserError(f"cannot store the knowledge base in {self.db.name}: {res.message}")
        finally:
            writer.close()

    def index(self, kb: KnowledgeBase, embedder: Embedder) -> KbIndex:
        return PgVectorIndex(self.db)


def _inserts(target: str, rows: list[str]) -> list[str]:
    return [f"INSERT INTO {target} VALUES " + ",".join(rows[i : i + 200]) for i in range(0, len(rows), 200)]


def default_file(db: Database) -> Path:
    """One file per database: its name plus a hash of where it is (without credentials)."""
    where = re.sub(r"://[^@/]*@", "://", db.url)
    key = hashlib.sha1(where.encode()).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", db.name)[:60] or "db"
    return home_dir() / "kb" / f"{safe}-{key}.json"


def open_store(db: Database, *, path: Path | None = None, prefer_pg: bool = True) -> KbStore:
    """The knowledge base's home: an explicit ``path``, the PostgreSQL database itself, else a file."""
    if path is not None:
        return FileStore(Path(path))
    if db.dialect == "postgres" and prefer_pg and _pg_usable(db):
        return PgStore(db)
    return FileStore(default_file(db))


def _pg_usable(db: Database) -> bool:
    """Whether the schema exists already, or pgvector is available and this role may create schemas."""
    res = db.execute(
        f"SELECT to_regclass('{SCHEMA}.kb_doc') IS NOT NULL, "
        "EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector'), "
        "has_database_privilege(current_database(), 'CREATE')"
    )
    if not res.ok or not res.rows:
        return False
    exists, vector, create = res.rows[0]
    return bool(exists or (vector and create))


def dumps(kb: KnowledgeBase) -> str:
    """The export format: the knowledge base as indented JSON (the value lists for matching left out)."""
    data = kb.model_dump(mode="json")
    for t in data["tables"]:
        for c in t["columns"]:
            c.pop("values", None)
    return json.dumps(data, indent=2, ensure_ascii=False)
