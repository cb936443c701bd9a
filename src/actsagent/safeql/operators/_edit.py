"""Small AST edits shared by operators (renaming, qualifying, join conditions)."""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import Analysis, ScopeInfo, Source
from actsagent.safeql.catalog import Catalog
from actsagent.safeql.quoting import ident, needs_quotes, spelled_as  # noqa: F401 (operators import them from here)
from actsagent.schema.model import TableInfo


def alias_ident(alias: str, dialect: str) -> exp.Identifier:
    """A qualifier as the query wrote its alias (``T1``): quoted for characters or reserved words, not for
    case, since a bare alias and a bare qualifier fold alike."""
    return exp.to_identifier(alias, quoted=needs_quotes(alias.lower(), dialect))


def set_column(
    col: exp.Column, name: str | None, qualifier: str | None, dialect: str, *, keep_qualifier: bool = True
) -> None:
    if name is not None:
        col.set("this", ident(name, dialect))
    if qualifier is not None:
        col.set("table", alias_ident(qualifier, dialect))
    elif not keep_qualifier:
        col.set("table", None)


def join_condition(left: Source, new: TableInfo, new_ref: str, catalog: Catalog, dialect: str) -> exp.Expr | None:
    """``left.x = new.y`` along a foreign key either way, else along a shared key-like column."""
    lt = left.table
    if lt is None:
        return None
    pairs: list[tuple[str, str]] = []
    for fk in lt.foreign_keys:
        if fk.ref_table.lower() == new.name.lower() and len(fk.columns) == 1:
            pairs.append((fk.columns[0], fk.ref_columns[0] or (new.primary_key[:1] or ["rowid"])[0]))
    for fk in new.foreign_keys:
        if fk.ref_table.lower() == lt.name.lower() and len(fk.columns) == 1:
            pairs.append((fk.ref_columns[0] or (lt.primary_key[:1] or ["rowid"])[0], fk.columns[0]))
    if not pairs:
        shared = [c.name for c in lt.columns if new.column(c.name) is not None]
        keyish = [
            c
            for c in shared
            if c.lower().endswith("id") or c.lower().endswith("_code") or _is_key(lt, c) or _is_key(new, c)
        ]
        pairs = [(c, _stored_name(new, c)) for c in keyish]
    if not pairs:
        return None
    a, b = pairs[0]
    return exp.EQ(
        this=exp.column(ident(a, dialect), table=alias_ident(left.alias, dialect)),
        expression=exp.column(ident(b, dialect), table=ident(new_ref, dialect)),
    )


def _is_key(table: TableInfo, column: str) -> bool:
    col = table.column(column)
    return col is not None and col.primary_key


def _stored_name(table: TableInfo, column: str) -> str:
    """The column's name as the catalog spells it (``column`` is known to be there)."""
    col = table.column(column)
    return col.name if col is not None else column


def refs_in_scope(an: Analysis, scope: ScopeInfo, qualifier: str) -> list[exp.Column]:
    """Columns of ``scope`` (not of nested scopes) qualified by ``qualifier``."""
    out = []
    for c in scope.select.find_all(exp.Column):
        if (c.table or "").lower() == qualifier.lower() and an.scope_of(c) is scope:
            out.append(c)
    return out
