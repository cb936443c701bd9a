"""Which tables and columns a SQL statement reads, and renaming them through the AST.

Benchmarks' gold SQL leaves most columns unqualified and aliases tables (``T1``, ``T2``), so a
column's table is known only after sqlglot's ``qualify`` has resolved it against the catalog.
The degraded-schema benchmark, retrieval recall and view-based schema refinement all need that
resolution, so it lives here once. SQLite's quirk that a double-quoted word naming no column is
a string (``WHERE name = "Bob"``) is applied first, or qualify would lower-case the string.
"""

from __future__ import annotations

import sqlglot
from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from actsagent.errors import ActsagentError
from actsagent.schema.model import SchemaInfo


class SqlNamesError(ActsagentError):
    """The statement cannot be parsed or its names cannot be resolved against the catalog."""


class SqlRefs(BaseModel):
    """Lower-cased names of the real tables and (table, column) pairs a statement reads."""

    tables: set[str] = Field(default_factory=set)
    columns: set[tuple[str, str]] = Field(default_factory=set)


def sqlglot_schema(info: SchemaInfo, dialect: str) -> MappingSchema:
    """The catalog for sqlglot's resolver. PostgreSQL keeps the catalog's spelling (a quoted
    ``"HireDt"`` matches only that column, an unquoted name is folded to lower case first);
    SQLite matches names case-insensitively. Types are not needed to resolve names."""
    fold = str.lower if dialect != "postgres" else (lambda n: n)
    mapping: dict[str, object] = {fold(t.name): {fold(c.name): "text" for c in t.columns} for t in info.tables}
    return MappingSchema(mapping, dialect=_sqlglot_dialect(dialect), normalize=False)


def _sqlglot_dialect(dialect: str) -> str:
    return "postgres" if dialect == "postgres" else "sqlite"


def _parse(sql: str, info: SchemaInfo, dialect: str) -> exp.Expr:
    d = _sqlglot_dialect(dialect)
    try:
        trees = [t for t in sqlglot.parse(sql, read=d) if t is not None]
    except sqlglot.errors.SqlglotError as e:
        raise SqlNamesError(f"cannot parse: {str(e).splitlines()[0]}") from e
    if len(trees) != 1:
        raise SqlNamesError(f"expected one statement, found {len(trees)}")
    if dialect == "sqlite":
        _quoted_strings(trees[0], info)
    return trees[0]


def _qualify(tree: exp.Expr, info: SchemaInfo, dialect: str, *, expand_alias_refs: bool = True) -> exp.Expr:
    try:
        return qualify(
            tree,
            schema=sqlglot_schema(info, dialect),
            dialect=_sqlglot_dialect(dialect),
            validate_qualify_columns=False,
            identify=False,
            expand_stars=False,
            expand_alias_refs=expand_alias_refs,
        )
    except (sqlglot.errors.SqlglotError, KeyError, ValueError, AttributeError) as e:
        raise SqlNamesError(f"cannot resolve names: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from e


def parse_qualified(sql: str, info: SchemaInfo, dialect: str) -> exp.Expr:
    """``sql`` parsed and qualified: every column resolvable from the catalog carries its table's alias."""
    return _qualify(_parse(sql, info, dialect), info, dialect)


def _quoted_strings(tree: exp.Expr, info: SchemaInfo) -> None:
    """SQLite reads a double-quoted word that names no column (nor alias) as a string literal."""
    known = {c.name.lower() for t in info.tables for c in t.columns}
    known |= {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    for col in list(tree.find_all(exp.Column)):
        ident = col.this
        if isinstance(ident, exp.Identifier) and ident.quoted and not col.table and ident.name.lower() not in known:
            col.replace(exp.Literal.string(ident.name))


def _resolve(scope: Scope, column: exp.Column) -> exp.Table | None:
    """The base table a qualified column reads, looked up through enclosing scopes (correlation)."""
    s: Scope | None = scope
    while s is not None:
        src = s.sources.get(column.table)
        if src is not None:
            return src if isinstance(src, exp.Table) else None
        s = s.parent
    return None


def _real_tables(tree: exp.Expr, info: SchemaInfo) -> list[exp.Table]:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    names = {t.name.lower() for t in info.tables}
    return [t for t in tree.find_all(exp.Table) if t.name.lower() in names and t.name.lower() not in ctes]


def references(sql: str, info: SchemaInfo, dialect: str) -> SqlRefs:
    """The catalog tables and columns ``sql`` reads (columns the catalog does not know are left out)."""
    tree = parse_qualified(sql, info, dialect)
    refs = SqlRefs(tables={t.name.lower() for t in _real_tables(tree, info)})
    for scope in traverse_scope(tree):
        for col in scope.columns:
            src = _resolve(scope, col)
            if src is None:
                continue
            table = info.table(src.name)
            if table is not None and table.column(col.name) is not None:
                refs.columns.add((table.name.lower(), col.name.lower()))
    return refs


def rename(
    sql: str,
    info: SchemaInfo,
    dialect: str,
    *,
    tables: dict[str, str],
    columns: dict[tuple[str, str], str],
    keep_output_names: bool = False,
    minimal: bool = False,
    out_dialect: str | None = None,
) -> str:
    """``sql`` with real tables and their columns renamed (keys lower-case: ``tables[old]``,
    ``columns[(old_table, old_column)]``); table aliases equal to a renamed table's name follow it.

    ``keep_output_names`` keeps the result's column labels (each renamed output column keeps its
    old label as an alias); otherwise the labels qualify added are dropped, so a renamed column
    shows its new name.

    ``minimal`` keeps the statement's shape: a column the author left unqualified stays unqualified,
    no table alias or output label is added - the SQL a person would write against the new names,
    which may then be ambiguous or resolve differently (what schema refinement must detect).
    """
    d = _sqlglot_dialect(dialect)
    tree = _parse(sql, info, dialect)
    unqualified = {id(c) for c in tree.find_all(exp.Column) if not c.table}
    unaliased = {id(t) for t in tree.find_all(exp.Table) if not t.alias}
    original_aliases = _top_selects(tree)
    tree = _qualify(tree, info, dialect, expand_alias_refs=not minimal)
    todo: list[tuple[exp.Column, str | None, str | None]] = []  # column, new name, new qualifier
    for scope in traverse_scope(tree):
        for col in scope.columns:
            src = _resolve(scope, col)
            if src is None or src.name.lower() not in {t.name.lower() for t in info.tables}:
                continue
            old_table = src.name.lower()
            new_col = columns.get((old_table, col.name.lower()))
            new_qual = tables.get(old_table) if col.table.lower() == old_table else None
            if new_col or new_qual:
                todo.append((col, new_col, new_qual))
    for col, new_col, new_qual in todo:
        if new_col:
            col.set("this", _ident(new_col, d))
        if new_qual:
            col.set("table", _ident(new_qual, d))
    for t in _real_tables(tree, info):
        new = tables.get(t.name.lower())
        if not new:
            continue
        if t.alias and t.alias.lower() == t.name.lower():
            t.set("alias", exp.TableAlias(this=_ident(new, d)))
        t.set("this", _ident(new, d))
    if minimal:
        for c in tree.find_all(exp.Column):
            if id(c) in unqualified:
                c.set("table", None)
        for t in tree.find_all(exp.Table):
            if id(t) in unaliased:
                t.set("alias", None)
    if not keep_output_names:
        for select, aliased in original_aliases:
            referenced = {
                c.name.lower()
                for key in ("order", "group", "having")
                if select.args.get(key)
                for c in select.args[key].find_all(exp.Column)
                if not c.table
            }
            for e, was_aliased in zip(select.expressions, aliased):
                if isinstance(e, exp.Alias) and not was_aliased and e.alias.lower() not in referenced:
                    e.replace(e.this)
    return tree.sql(dialect=_sqlglot_dialect(out_dialect or dialect))


def _top_selects(tree: exp.Expr) -> list[tuple[exp.Select, list[bool]]]:
    """The outermost SELECTs (each branch of a set operation) and which outputs the author aliased
    (recorded before qualify, which aliases every output)."""
    out: list[tuple[exp.Select, list[bool]]] = []
    stack = [tree.this if isinstance(tree, exp.Subquery) else tree]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.SetOperation):
            stack += [node.left, node.right]
        elif isinstance(node, exp.Select):
            out.append((node, [isinstance(e, exp.Alias) for e in node.expressions]))
    return out


def _ident(name: str, dialect: str) -> exp.Identifier:
    plain = name.isidentifier() and name == name.lower() and name.upper() not in _reserved(dialect)
    return exp.to_identifier(name, quoted=not plain)


def _reserved(dialect: str) -> frozenset[str]:
    from sqlglot.dialects.dialect import Dialect

    gen = Dialect.get_or_raise(dialect).generator_class
    return frozenset(w.upper() for w in getattr(gen, "RESERVED_KEYWORDS", ()))
