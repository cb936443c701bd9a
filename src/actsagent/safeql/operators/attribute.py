"""Attribute refinement: replace an unknown column by one the FROM items provide (fixing its
qualifier), or swap a function argument for a column of the type the function needs."""

from __future__ import annotations

import re

from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.locate import locate_columns, locate_functions
from actsagent.safeql.operators._edit import ident, set_column, spelled_as
from actsagent.safeql.operators.base import Context, Failure, Proposal
from actsagent.safeql.types import column_category

name = "attribute"
handles = frozenset({"unknown_column", "unknown_function"})


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.analysis is None:
        return []
    if failure.kind == "unknown_column":
        return _replace_column(ctx, failure)
    return _swap_argument(ctx, failure)


def _in_scope_columns(scope) -> list[tuple[str, str, str | None]]:
    """(source alias, column name, type) of every column the scope's FROM items provide."""
    out = []
    for src in scope.sources.values():
        if src.table is not None:
            out += [(src.alias, c.name, c.type) for c in src.table.columns]
        elif src.outputs:
            out += [(src.alias, o, None) for o in src.outputs]
    return out


_HINTED = re.compile(r'column "(?:([^".]+)\.)?([^"]+)"')


def _hinted(failure: Failure) -> set[tuple[str | None, str]]:
    """(qualifier, column) pairs the engine suggests (PostgreSQL: 'Perhaps you meant to reference the
    column "e.FirstName".'): its own analyzer saw the query, so they rank first."""
    hint = failure.error.hint if failure.error is not None else None
    return {((q or "").lower() or None, c.lower()) for q, c in _HINTED.findall(hint or "")}


def _replace_column(ctx: Context, failure: Failure) -> list[Proposal]:
    group = locate_columns(ctx.scopes, failure)
    if not group:
        return []
    first = group[0]
    cname, qual = first.column.name, first.column.table
    written = first.column.this if isinstance(first.column.this, exp.Identifier) else None
    avail = _in_scope_columns(first.scope)
    names: dict[str, list[str]] = {}
    for alias, col, _t in avail:
        names.setdefault(col.lower(), []).append(alias)
    hinted = _hinted(failure)

    def dist(alias: str, col: str) -> float:
        if (alias.lower(), col.lower()) in hinted or (None, col.lower()) in hinted:
            return 0.0
        return ctx.catalog.token_distance(cname, col)  # 0 for the same name up to case

    scored = sorted(((dist(alias, col), alias, col) for alias, col, _t in avail), key=lambda x: x[0])
    out = []
    for d, alias, col in scored:
        # same name, reaching the column as written: only the qualifier can change
        same = col.lower() == cname.lower() and spelled_as(written, col, ctx.dialect)
        if same and qual and alias.lower() == qual.lower():
            continue
        new, cols = copy_at(ctx.tree, *[r.column for r in group])
        needs_qual = bool(qual) or len(names[col.lower()]) > 1
        for c in cols:
            set_column(c, None if same else col, alias if needs_qual else None, ctx.dialect, keep_qualifier=False)
        before = f"{qual}.{cname}" if qual else cname
        shown = ident(col, ctx.dialect).sql(dialect=ctx.dialect)
        after = f"{alias}.{shown}" if needs_qual else shown
        why = (
            f"column {before!r} does not exist; the engine suggests {after!r}"
            if d == 0.0 and hinted
            else f"column {before!r} does not exist; {after!r} is the same name as stored (quoted)"
            if col.lower() == cname.lower() and not same
            else f"column {before!r} does not exist; nearest available is {after!r}"
        )
        out.append(Proposal(new, name, why, before, after, d, group=before))
    return out


_NEEDS_NUMERIC = {"sum", "avg", "stddev", "variance"}


def _swap_argument(ctx: Context, failure: Failure) -> list[Proposal]:
    """``sum(name)`` -> ``sum(age)``: the function exists, the argument has the wrong type."""
    funcs = locate_functions(ctx.tree, failure)
    if not funcs:
        return []
    f = funcs[0]
    fname = (f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower()
    if not ctx.catalog.has_function(fname):
        return []
    args = [a for a in f.iter_expressions() if isinstance(a, exp.Column)]
    out = []
    for arg in args:
        scope = ctx.scopes.scope_of(arg)
        if scope is None:
            continue
        for alias, col, typ in _in_scope_columns(scope):
            if col.lower() == arg.name.lower():
                continue
            if fname in _NEEDS_NUMERIC and column_category(typ) != "num":
                continue
            dist = ctx.catalog.token_distance(arg.name, col)
            new, (a2,) = copy_at(ctx.tree, arg)
            set_column(a2, col, alias if arg.table else None, ctx.dialect, keep_qualifier=False)
            out.append(
                Proposal(
                    new,
                    name,
                    f"{fname}() does not accept {arg.sql(dialect=ctx.dialect)}; use the type-compatible column {col!r}",
                    arg.name,
                    col,
                    dist,
                    group=f"arg:{arg.name}",
                )
            )
    return out
