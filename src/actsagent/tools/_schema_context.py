"""The part of the schema a prompt shows: the tables a request touches, not the whole database.

Every LLM call used to repeat the full listing (a 75-column table for a question about two of its
columns, a dozen unrelated tables). A prompt now gets the tables the SQL names, the tables whose
name or column names the request mentions (a column name most tables share, like ``id``, says
nothing), and their direct foreign-key neighbours; a selected
table keeps all its columns (a missing column costs correctness, an extra one only tokens). Small
databases are shown whole, and the listing is never empty.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import BaseModel

from actsagent.schema.model import SchemaInfo, TableInfo

SMALL_TABLES = 8  # a database this small (and narrow) is shown whole
SMALL_COLUMNS = 80
TELLING_COLUMN = 2  # a column name in more tables than this ("id", "name") does not point at a table

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


class SchemaView(BaseModel):
    """The listing a prompt shows and how much of the database it covers."""

    text: str
    shown: list[str]
    total: int

    @property
    def partial(self) -> bool:
        return len(self.shown) < self.total

    def prompt_vars(self) -> dict[str, object]:
        """The variables the ``_schema.md`` partial reads."""
        return {"schema": self.text, "schema_shown": len(self.shown), "schema_total": self.total}


def sql_tables(sql: str | list[str] | None, dialect: str) -> set[str]:
    """Lower-cased names of the real tables the SQL reads or writes (CTE names excluded).

    Unparseable SQL (syntax errors are what we repair) falls back to its identifier-like words,
    which the caller intersects with the catalog.
    """
    import sqlglot
    from sqlglot import exp

    names: set[str] = set()
    for stmt in [sql] if isinstance(sql, str) else (sql or []):
        if not stmt or not stmt.strip():
            continue
        try:
            trees = sqlglot.parse(stmt, read=dialect)
        except sqlglot.errors.SqlglotError:
            names |= _words(stmt)
            continue
        for tree in trees:
            if tree is None:
                continue
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            names |= {t.name.lower() for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes}
    return names


def sql_list(*parts: str | list[str] | None) -> list[str]:
    """Statements from several sources (original, draft, candidates) as one list."""
    out: list[str] = []
    for p in parts:
        out += [p] if isinstance(p, str) else list(p or [])
    return out


def shown_whole(info: SchemaInfo) -> bool:
    """Whether the database is small enough that every prompt lists it whole."""
    return len(info.tables) <= SMALL_TABLES and sum(len(t.columns) for t in info.tables) <= SMALL_COLUMNS


def select_tables(info: SchemaInfo, *, sql: str | list[str] | None = None, intent: str | None = None) -> list[str]:
    """Names (catalog spelling, catalog order) of the tables a prompt about ``sql``/``intent`` needs."""
    tables = info.tables
    if shown_whole(info):
        return [t.name for t in tables]
    named = sql_tables(sql, info.dialect) if sql else set()
    words = _words(intent or "") - _common_columns(tables)
    picked = {t.name.lower() for t in tables if t.name.lower() in named or _mentioned(t, words)}
    neighbours: set[str] = set()
    for t in tables:
        refs = {fk.ref_table.lower().split(".")[-1] for fk in t.foreign_keys}
        if t.name.lower() in picked:
            neighbours |= refs
        elif refs & picked:
            neighbours.add(t.name.lower())
    picked |= neighbours
    chosen = [t.name for t in tables if t.name.lower() in picked]
    return chosen or [t.name for t in tables]


def schema_view(info: SchemaInfo, *, sql: str | list[str] | None = None, intent: str | None = None) -> SchemaView:
    chosen = select_tables(info, sql=sql, intent=intent)
    full = len(chosen) == len(info.tables)
    text = info.render() if full else info.render(tables=chosen)
    if not text.strip():  # nothing rendered (e.g. an odd name): never show an empty listing
        text, chosen = info.render(), [t.name for t in info.tables]
    return SchemaView(text=text, shown=chosen, total=len(info.tables))


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _common_columns(tables: list[TableInfo]) -> set[str]:
    """Column names too widespread to tell which table a request means; table names still count."""
    seen = Counter(c.name.lower() for t in tables for c in t.columns)
    return {n for n, k in seen.items() if k > TELLING_COLUMN} - {t.name.lower() for t in tables}


def _mentioned(t: TableInfo, words: set[str]) -> bool:
    return t.name.lower() in words or any(c.name.lower() in words for c in t.columns)
