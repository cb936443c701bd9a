"""The refined schema as PostgreSQL views, and SQL written over the views translated back to base tables.

Views live in a schema of their own (``refined`` by default); base tables are only read. The
schema carries a marker comment holding the refinement as JSON, so an existing schema that
actsagent did not create, or that holds anything but views, is never touched. SQLite is not
supported: a view in the same file would change the file, and a view cannot read an attached
database (only TEMP views can) - refine a PostgreSQL copy (``actsagent db load``) instead.
"""

from __future__ import annotations

import json

import sqlglot
from sqlglot import exp

from actsagent.db.admin import url_for
from actsagent.db.base import Database
from actsagent.db.postgres import PostgresDatabase
from actsagent.errors import UserError
from actsagent.schema.model import ForeignKey, SchemaInfo, TableInfo
from actsagent.schema_refine.models import Refinement, TableMap
from actsagent.sqlnames import rename

MARKER = "actsagent_refinement"


def _q(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql("postgres")


def require_postgres(db: Database) -> PostgresDatabase:
    if db.dialect != "postgres" or not isinstance(db, PostgresDatabase):
        raise UserError(
            "refine-schema materialises views and needs PostgreSQL: load the SQLite file into the "
            "embedded server first (`actsagent db load FILE`), then refine that database"
        )
    return db


def view_statement(tm: TableMap, info: TableInfo, schema: str) -> str:
    cols = ", ".join(
        f"{_q(c.name)} AS {_q(tm.column_name(c.name))}" if tm.column_name(c.name) != c.name else _q(c.name)
        for c in info.columns
    )
    return f"CREATE VIEW {_q(schema)}.{_q(tm.view)} AS SELECT {cols} FROM {_q(tm.base_schema)}.{_q(tm.table)}"


def with_search_path(url: str, *schemas: str) -> str:
    """``url`` whose sessions resolve unqualified names in ``schemas`` first (libpq ``options``)."""
    path = ",".join(_q(s) for s in schemas).replace(" ", "\\ ")
    return url_for(url, options=f"-c search_path={path}")


def _writer(db: PostgresDatabase) -> PostgresDatabase:
    return PostgresDatabase(db.url, writable=True, pool_size=1, single_statement=False)


def schema_state(db: PostgresDatabase, schema: str) -> tuple[bool, str | None, list[str]]:
    """(exists, marker comment, relations other than views and extensions in it): dropping the schema
    cascades, so an extension there would take every column of its types elsewhere with it."""
    res = db.execute(
        f"SELECT n.oid IS NOT NULL, obj_description(n.oid, 'pg_namespace'), "
        f"ARRAY(SELECT c.relname || ':' || c.relkind::text FROM pg_class c WHERE c.relnamespace = n.oid "
        f"AND c.relkind <> 'v') || ARRAY(SELECT e.extname || ':extension' FROM pg_extension e "
        f"WHERE e.extnamespace = n.oid) FROM (SELECT 1) x LEFT JOIN pg_namespace n ON n.nspname = "
        f"{exp.Literal.string(schema).sql('postgres')}"
    )
    if not res.ok:
        raise UserError(f"cannot inspect schema {schema!r}: {res.message}")
    exists, comment, others = res.rows[0]
    return bool(exists), comment, list(others or [])


def _refuse_foreign(db: PostgresDatabase, schema: str) -> bool:
    exists, comment, others = schema_state(db, schema)
    if exists and not (comment or "").startswith('{"' + MARKER):
        raise UserError(f"schema {schema!r} exists and was not made by actsagent: choose another --schema")
    if others:
        raise UserError(f"schema {schema!r} holds more than views ({', '.join(others[:5])}): refusing to touch it")
    return exists


def create_views(
    db: PostgresDatabase, refinement: Refinement, base: SchemaInfo, *, schema: str | None = None, comment: bool = True
) -> None:
    """(Re)create the refinement's views in ``schema`` in one transaction; base tables are only read."""
    schema = schema or refinement.schema_name
    exists = _refuse_foreign(db, schema)
    stmts = [f"DROP SCHEMA {_q(schema)} CASCADE"] if exists else []
    stmts.append(f"CREATE SCHEMA {_q(schema)}")
    for tm in refinement.tables:
        info = base.table(tm.table)
        if info is None:
            raise UserError(f"table {tm.table!r} is not in {db.name}")
        stmts.append(view_statement(tm, info, schema))
    if comment:
        doc = json.dumps({MARKER: refinement.model_dump(mode="json", exclude={"decisions", "skipped_workload"})})
    else:
        doc = json.dumps({MARKER: "trial"})
    stmts.append(f"COMMENT ON SCHEMA {_q(schema)} IS {exp.Literal.string(doc).sql('postgres')}")
    w = _writer(db)
    try:
        res = w.execute(";\n".join(stmts), read_only=False, timeout_s=60)
        if not res.ok:
            raise UserError(f"cannot create the views in {schema!r}: {res.message}")
    finally:
        w.close()


def drop_views(db: PostgresDatabase, schema: str) -> None:
    if not _refuse_foreign(db, schema):
        return
    w = _writer(db)
    try:
        res = w.execute(f"DROP SCHEMA {_q(schema)} CASCADE", read_only=False)
        if not res.ok:
            raise UserError(f"cannot drop schema {schema!r}: {res.message}")
    finally:
        w.close()


def load_refinement(db: Database, schema: str = "refined") -> Refinement | None:
    """The refinement stored with its views, or None."""
    exists, comment, _ = schema_state(require_postgres(db), schema)
    if not exists or not comment:
        return None
    try:
        data = json.loads(comment)[MARKER]
        return Refinement.model_validate(data)
    except (ValueError, KeyError, TypeError):
        return None


class RefinedDatabase(PostgresDatabase):
    """The database as the refined schema shows it: sessions resolve names in the view schema first,
    and ``schema()`` lists only the views (the agent never sees the cryptic base names)."""

    def __init__(self, base: PostgresDatabase, refinement: Refinement) -> None:
        super().__init__(with_search_path(base.url, refinement.schema_name, "public"), limits=base.limits)
        self.name = base.name
        self.refinement = refinement

    def schema(self, *, refresh: bool = False) -> SchemaInfo:
        return refined_info(self.refinement, super().schema(refresh=refresh))


def refined_info(refinement: Refinement, base: SchemaInfo) -> SchemaInfo:
    """The catalog the views present, built from the base tables' without touching the database: the
    names renamed, and keys, row counts, comments and sample values carried over (a view has none of
    its own, so a prompt over the views shows the same relationships the base tables have)."""
    views = refinement.table_map()
    cols = refinement.column_map()

    def col_name(table: str, column: str) -> str:
        return cols.get((table.lower(), column.lower()), column)

    def ref(target: str | None) -> str | None:
        if not target or "." not in target:
            return target
        table, column = target.rsplit(".", 1)
        table = table.split(".")[-1]
        return f"{views.get(table.lower(), table)}.{col_name(table, column)}"

    tables = []
    for tm in refinement.tables:
        t = next(
            (
                x
                for x in base.tables
                if x.name.lower() == tm.table.lower() and (x.schema_name or "public") == tm.base_schema
            ),
            None,
        )  # the base table itself, never a view of the same name in the refined schema
        if t is None:
            continue
        tables.append(
            t.model_copy(
                update={
                    "name": tm.view,
                    "schema_name": None,
                    "columns": [
                        c.model_copy(update={"name": tm.column_name(c.name), "references": ref(c.references)})
                        for c in t.columns
                    ],
                    "primary_key": [tm.column_name(c) for c in t.primary_key],
                    "foreign_keys": [
                        ForeignKey(
                            columns=[tm.column_name(c) for c in fk.columns],
                            ref_table=views.get(fk.ref_table.split(".")[-1].lower(), fk.ref_table.split(".")[-1]),
                            ref_columns=[col_name(fk.ref_table.split(".")[-1], c) for c in fk.ref_columns],
                        )
                        for fk in t.foreign_keys
                    ],
                }
            )
        )
    return SchemaInfo(dialect=base.dialect, database=base.database, tables=tables, reserved_words=base.reserved_words)


def to_base(sql: str, refinement: Refinement, base: SchemaInfo) -> str:
    """``sql`` written over the refined views, rewritten to read the base tables directly.

    Result column labels stay those of the views (``AS`` the view's name), so the caller sees the
    same result either way; schema qualifiers naming the view schema become the base schema.
    """
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError as e:
        raise UserError(f"cannot parse the SQL to translate: {str(e).splitlines()[0]}") from e
    bases = {tm.view.lower(): tm.base_schema for tm in refinement.tables}
    for t in tree.find_all(exp.Table):
        if t.db and t.db.lower() == refinement.schema_name.lower():
            t.set("db", exp.to_identifier(bases.get(t.name.lower(), "public")))
    info = refined_info(refinement, base)
    tables = {tm.view.lower(): tm.table for tm in refinement.tables if tm.view != tm.table}
    columns = {(tm.view.lower(), new.lower()): old for tm in refinement.tables for old, new in tm.columns.items()}
    return rename(
        tree.sql(dialect="postgres"), info, "postgres", tables=tables, columns=columns, keep_output_names=True
    )
