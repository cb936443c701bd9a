"""Value refinement: an empty result from ``col = 'literal'`` (or IN, LIKE) where the literal is not
stored; replace it by the column's nearest stored values (case, spacing, abbreviations, patterns)."""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.catalog import is_text_type
from actsagent.safeql.operators.base import EMPTY, Context, Failure, Proposal

name = "value"
handles = frozenset({EMPTY})


def _targets(ctx: Context):
    """(comparison, column node, literal node, is_like) for text literals compared with a column."""
    an = ctx.scopes
    for node in ctx.tree.find_all(exp.EQ, exp.In, exp.Like, exp.ILike):
        if isinstance(node, exp.In):
            col, lits = node.this, [e for e in node.expressions if isinstance(e, exp.Literal)]
        else:
            col, other = node.this, node.expression
            if isinstance(col, exp.Literal) and isinstance(other, exp.Column):
                col, other = other, col
            lits = [other] if isinstance(other, exp.Literal) else []
        if not isinstance(col, exp.Column):
            continue
        r = an.resolve(col)
        if r.status != "ok" or r.source is None or r.source.table is None:
            continue
        ci = r.source.table.column(col.name)
        if ci is None or not is_text_type(ci.type):
            continue
        for lit in lits:
            if lit.is_string:
                yield node, r.source.table, ci, lit, isinstance(node, exp.Like | exp.ILike)


def _stored(ctx: Context, table, column, literal: str, like: bool) -> bool:
    op = "LIKE" if like else "="
    d = ctx.db.dialect
    lit = exp.Literal.string(literal).sql(d)
    res = ctx.db.execute(
        f"SELECT 1 FROM {table.sql_name(d)} WHERE {column.sql_name(d)} {op} {lit} LIMIT 1", max_rows=1, timeout_s=2
    )
    return bool(res.ok and res.rows)


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.analysis is None:
        return []
    out = []
    for node, table, column, lit, like in _targets(ctx):
        text = lit.this
        if _stored(ctx, table, column, text, like):
            continue
        core = text.strip("%_") if like else text
        if not core:
            continue
        for value, dist in ctx.catalog.nearest_values(table, column, core, ctx.options.k * 2):
            new_text = (
                text[: len(text) - len(text.lstrip("%"))] + value + text[len(text.rstrip("%")) :] if like else value
            )
            if new_text == text:
                continue
            new, (l2,) = copy_at(ctx.tree, lit)
            l2.replace(exp.Literal.string(new_text))
            out.append(
                Proposal(
                    new,
                    name,
                    f"no row has {column.name} = {text!r}; nearest stored value is {value!r}",
                    text,
                    new_text,
                    dist,
                    group=f"{id(lit)}",
                )
            )
        if like and ctx.dialect == "postgres" and isinstance(node, exp.Like):
            new, (n2,) = copy_at(ctx.tree, node)
            n2.replace(exp.ILike(this=n2.this.copy(), expression=n2.expression.copy()))
            out.append(
                Proposal(new, name, "match the pattern case-insensitively", "LIKE", "ILIKE", 0.05, group=f"{id(lit)}")
            )
    return out
