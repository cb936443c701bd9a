"""A small analyzer over sqlglot ASTs: scopes, sources and column resolution against the catalog.

The engine's error names an identifier (and in PostgreSQL a character position) but not which AST
occurrence failed; resolving every column in its own scope, as the engine's analyzer does, tells
which occurrences are unresolved, ambiguous or fine, respecting aliases, CTEs, derived tables,
correlated subqueries and set operations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar, cast

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from actsagent.schema.model import ColumnInfo, SchemaInfo, TableInfo

_E = TypeVar("_E", bound="exp.Expr")


@dataclass
class Source:
    """One FROM item as seen by a scope: a base table, or a derived table/CTE with known outputs."""

    alias: str
    table: TableInfo | None = None
    outputs: list[str] | None = None  # derived sources; None when it selects *
    node: exp.Expr | None = None
    missing: bool = False  # a base table the catalog does not know

    def has(self, column: str) -> bool | None:
        """True/False when known; None when anything may be there (``*``, unknown table)."""
        low = column.lower()
        if self.table is not None:
            return self.table.column(column) is not None
        if self.outputs is not None:
            return any(o.lower() == low for o in self.outputs)
        return None


@dataclass
class ScopeInfo:
    select: exp.Expr
    sources: dict[str, Source]
    parent: ScopeInfo | None
    aliases: set[str] = field(default_factory=set)
    depth: int = 0


@dataclass
class Resolution:
    column: exp.Column
    scope: ScopeInfo
    status: str  # ok | missing | unknown_qualifier | ambiguous
    source: Source | None = None
    candidates: list[Source] = field(default_factory=list)


def parse(sql: str, dialect: str) -> exp.Expr | None:
    """One statement, or None when sqlglot cannot read it as exactly one."""
    try:
        stmts = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError, RecursionError):
        return None
    return stmts[0] if len(stmts) == 1 else None


def is_query(ast: exp.Expr) -> bool:
    return isinstance(ast, exp.Query)


class Analysis:
    """Scopes of one AST, built once per candidate."""

    def __init__(self, ast: exp.Expr, schema: SchemaInfo) -> None:
        self.ast = ast
        self.schema = schema
        self.scopes: dict[int, ScopeInfo] = {}
        try:
            scopes = traverse_scope(ast)
        except (sqlglot.errors.OptimizeError, RecursionError, ValueError, KeyError):
            scopes = []
        raw: dict[int, Scope] = {id(s.expression): s for s in scopes}
        for s in scopes:  # parents before children is not guaranteed: build lazily
            self._info(s, raw)

    def _info(self, s: Scope, raw: dict[int, Scope]) -> ScopeInfo:
        key = id(s.expression)
        if key in self.scopes:
            return self.scopes[key]
        parent = self._info(s.parent, raw) if s.parent is not None else None
        sources: dict[str, Source] = {}
        for name, src in s.sources.items():
            if isinstance(src, exp.Table):
                t = self.schema.table(src.name) if src.name else None
                sources[name.lower()] = Source(alias=name, table=t, node=src, missing=t is None and bool(src.name))
            elif isinstance(src, Scope):
                sources[name.lower()] = Source(alias=name, outputs=_outputs(src.expression), node=src.expression)
        aliases = set()
        if isinstance(s.expression, exp.Select):
            aliases = {e.alias.lower() for e in s.expression.expressions if isinstance(e, exp.Alias)}
        info = ScopeInfo(
            select=s.expression,
            sources=sources,
            parent=parent,
            aliases=aliases,
            depth=(parent.depth + 1) if parent else 0,
        )
        self.scopes[key] = info
        return info

    def scope_of(self, node: exp.Expr) -> ScopeInfo | None:
        cur = node.parent
        while cur is not None:
            if id(cur) in self.scopes and isinstance(cur, exp.Select):
                return self.scopes[id(cur)]
            cur = cur.parent
        return None

    def resolve(self, col: exp.Column) -> Resolution:
        scope = self.scope_of(col)
        if scope is None:
            return Resolution(col, ScopeInfo(self.ast, {}, None), "ok")
        name, qual = col.name, col.table
        if qual:
            s: ScopeInfo | None = scope
            while s is not None:
                src = s.sources.get(qual.lower())
                if src is not None:
                    has = src.has(name)
                    return Resolution(col, scope, "missing" if has is False else "ok", src)
                s = s.parent
            return Resolution(col, scope, "unknown_qualifier")
        s = scope
        while s is not None:
            hits = [src for src in s.sources.values() if src.has(name) is not False]
            known = [src for src in s.sources.values() if src.has(name) is True]
            if len(known) > 1:
                return Resolution(col, scope, "ambiguous", None, known)
            if hits:
                return Resolution(col, scope, "ok", hits[0])
            if name.lower() in s.aliases and _in_alias_clause(col):
                return Resolution(col, scope, "ok")
            s = s.parent
        if name.lower() in scope.aliases:
            return Resolution(col, scope, "ok")
        return Resolution(col, scope, "missing")

    def columns(self) -> list[exp.Column]:
        return [c for c in self.ast.find_all(exp.Column) if not isinstance(c.this, exp.Star)]

    def column_info(self, col: exp.Column) -> ColumnInfo | None:
        r = self.resolve(col)
        if r.status == "ok" and r.source is not None and r.source.table is not None:
            return r.source.table.column(col.name)
        return None

    def unresolved(self) -> list[Resolution]:
        out = [r for r in (self.resolve(c) for c in self.columns()) if r.status != "ok"]
        out.sort(key=lambda r: -r.scope.depth)  # inside out
        return out


def _in_alias_clause(col: exp.Column) -> bool:
    cur = col.parent
    while cur is not None and not isinstance(cur, exp.Select):
        if isinstance(cur, exp.Order | exp.Group | exp.Having):
            return True
        cur = cur.parent
    return False


def _outputs(q: exp.Expr) -> list[str] | None:
    while isinstance(q, exp.SetOperation):
        q = q.this
    if isinstance(q, exp.Subquery):
        q = q.this
    if not isinstance(q, exp.Select):
        return None
    out = []
    for e in q.expressions:
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            return None
        out.append(e.alias_or_name)
    return out


# ----- node paths: operators edit a copy, addressing nodes found in the original -----------------


def node_path(node: exp.Expr) -> list[tuple[str, int | None]]:
    path: list[tuple[str, int | None]] = []
    cur = node
    while cur.parent is not None:
        parent = cur.parent
        key = cur.arg_key or ""  # sqlglot sets arg_key whenever it sets parent
        val = parent.args.get(key)
        idx = None
        if isinstance(val, list):
            idx = next(i for i, v in enumerate(val) if v is cur)
        path.append((key, idx))
        cur = parent
    return list(reversed(path))


def follow(root: exp.Expr, path: list[tuple[str, int | None]]) -> exp.Expr:
    cur = root
    for key, idx in path:
        val = cur.args[key]
        cur = val[idx] if idx is not None else val
    return cur


def copy_at(root: exp.Expr, *nodes: _E) -> tuple[exp.Expr, list[_E]]:
    """A deep copy of ``root`` and the copies of ``nodes`` inside it (a copy has its original's node type)."""
    paths = [node_path(n) for n in nodes]
    new = root.copy()
    return new, [cast(_E, follow(new, p)) for p in paths]
