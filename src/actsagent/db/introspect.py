"""Read tables, columns, keys, comments, row estimates and value samples through ``Database.execute``."""

from __future__ import annotations

from typing import Protocol

from actsagent.config import Limits
from actsagent.db.results import ExecResult
from actsagent.schema.model import ColumnInfo, ForeignKey, SchemaInfo, TableInfo


class Database(Protocol):
    """What introspection reads through: any ``actsagent.db.Database`` (which calls it from ``schema()``)."""

    @property
    def dialect(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def limits(self) -> Limits: ...

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None, read_only: bool = True
    ) -> ExecResult: ...


SAMPLE_SCAN_ROWS = 10000  # rows read per column when looking for low-cardinality values
MAX_SAMPLE_VALUES = 20
TEXT_TYPES = ("text", "character", "char", "varchar", "citext", "name", "clob", "string")

PG_COLUMNS = """
SELECT n.nspname, c.relname, obj_description(c.oid, 'pg_class'), c.reltuples::bigint,
       a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, col_description(c.oid, a.attnum)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'actsagent', 'actsagent_kb')
  AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
  AND has_schema_privilege(n.oid, 'USAGE')
  AND has_column_privilege(c.oid, a.attnum, 'SELECT')  -- a role sees what it may read: no revoked view or column
ORDER BY n.nspname, c.relname, a.attnum
"""

PG_CONSTRAINTS = """
SELECT n.nspname, c.relname, con.contype,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord),
       rc.relname,
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord)
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
WHERE con.contype IN ('p', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'actsagent', 'actsagent_kb')
"""


def introspect(db: Database, *, samples: bool = True) -> SchemaInfo:
    schema = _introspect_postgres(db) if db.dialect == "postgres" else _introspect_sqlite(db)
    if samples:
        for t in schema.tables:
            for c in t.columns:
                if any(k in c.type.lower() for k in TEXT_TYPES) or (db.dialect == "sqlite" and c.type == ""):
                    _sample(db, t, c)
    return schema


def _rows(db: Database, sql: str) -> list[list]:
    res = db.execute(sql, max_rows=1_000_000, timeout_s=max(db.limits.statement_timeout_s, 30))
    if not res.ok:
        raise RuntimeError(f"introspection query failed: {res.message}")
    return res.rows


def _introspect_postgres(db: Database) -> SchemaInfo:
    tables: dict[tuple[str, str], TableInfo] = {}
    for nsp, rel, tcomment, reltuples, col, typ, nullable, ccomment in _rows(db, PG_COLUMNS):
        t = tables.get((nsp, rel))
        if t is None:
            t = tables[(nsp, rel)] = TableInfo(
                name=rel,
                schema_name=nsp,
                comment=tcomment,
                row_estimate=int(reltuples) if reltuples is not None and reltuples >= 0 else None,
            )
        t.columns.append(ColumnInfo(name=col, type=typ, nullable=bool(nullable), comment=ccomment))
    for nsp, rel, kind, cols, ref_table, ref_cols in _rows(db, PG_CONSTRAINTS):
        t = tables.get((nsp, rel))
        if t is None:
            continue
        if kind == "p":
            t.primary_key = list(cols)
            for c in cols:
                if (ci := t.column(c)) is not None:
                    ci.primary_key = True
        else:
            t.foreign_keys.append(ForeignKey(columns=list(cols), ref_table=ref_table, ref_columns=list(ref_cols)))
            if len(cols) == 1 and (ci := t.column(cols[0])) is not None:
                ci.references = f"{ref_table}.{ref_cols[0]}"
    for t in tables.values():
        if t.row_estimate is None:
            res = db.execute(f"SELECT count(*) FROM {t.sql_name('postgres')}")
            t.row_estimate = int(res.rows[0][0]) if res.ok else None
    reserved = [w for (w,) in _rows(db, "SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'T')")]
    return SchemaInfo(dialect="postgres", database=db.name, tables=list(tables.values()), reserved_words=reserved)


def _introspect_sqlite(db: Database) -> SchemaInfo:
    tables: list[TableInfo] = []
    names = _rows(
        db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    for (name,) in names:
        t = TableInfo(name=name)
        pk: list[tuple[int, str]] = []
        for _cid, col, typ, notnull, _default, pkpos in _rows(db, f"PRAGMA table_info({t.sql_name('sqlite')})"):
            t.columns.append(
                ColumnInfo(name=col, type=(typ or "").lower(), nullable=not notnull, primary_key=bool(pkpos))
            )
            if pkpos:
                pk.append((pkpos, col))
        t.primary_key = [c for _, c in sorted(pk)]
        fks: dict[int, ForeignKey] = {}
        for fid, _seq, ref_table, frm, to, *_ in _rows(db, f"PRAGMA foreign_key_list({t.sql_name('sqlite')})"):
            fk = fks.setdefault(fid, ForeignKey(columns=[], ref_table=ref_table, ref_columns=[]))
            fk.columns.append(frm)
            fk.ref_columns.append(to or "")
        t.foreign_keys = list(fks.values())
        for fk in t.foreign_keys:
            if len(fk.columns) == 1 and (ci := t.column(fk.columns[0])) is not None:
                ci.references = f"{fk.ref_table}.{fk.ref_columns[0] or 'rowid'}"
        res = db.execute(f"SELECT count(*) FROM {t.sql_name('sqlite')}")
        t.row_estimate = int(res.rows[0][0]) if res.ok else None
        tables.append(t)
    return SchemaInfo(dialect="sqlite", database=db.name, tables=tables)


def _sample(db: Database, t: TableInfo, c: ColumnInfo) -> None:
    col = c.sql_name(db.dialect)
    sql = (
        f"SELECT v, count(*) FROM (SELECT {col} AS v FROM {t.sql_name(db.dialect)} LIMIT {SAMPLE_SCAN_ROWS}) s "
        f"WHERE v IS NOT NULL GROUP BY v ORDER BY count(*) DESC, v LIMIT {MAX_SAMPLE_VALUES + 1}"
    )
    res = db.execute(sql)
    if not res.ok:
        return
    c.distinct_estimate = len(res.rows)
    if 0 < len(res.rows) <= MAX_SAMPLE_VALUES:
        c.sample_values = [str(v) for v, _ in res.rows]
