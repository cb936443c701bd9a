"""Aggregate placement refinement: a condition on an aggregate written in WHERE moves to HAVING
(SQLite: "misuse of aggregate"; PostgreSQL: "aggregate functions are not allowed in WHERE")."""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = "aggregate"
handles = frozenset({"other"})
_MESSAGES = ("misuse of aggregate", "aggregate functions are not allowed in where")


def _conjuncts(e: exp.Expression) -> list[exp.Expression]:
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    if isinstance(e, exp.Paren) and isinstance(e.this, exp.And):
        return _conjuncts(e.this)
    return [e]


def _has_own_aggregate(e: exp.Expression) -> bool:
    """An aggregate of this query level, not one inside a subquery."""
    return any(agg.find_ancestor(exp.Subquery) is None for agg in e.find_all(exp.AggFunc))


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.ast is None or not any(m in failure.message.lower() for m in _MESSAGES):
        return []
    out = []
    for select in ctx.ast.find_all(exp.Select):
        where = select.args.get("where")
        if where is None:
            continue
        parts = _conjuncts(where.this)
        moving = [p for p in parts if _has_own_aggregate(p) and p.find(exp.Select) is None]
        if not moving:
            continue
        new, (s2,) = copy_at(ctx.ast, select)
        keep = [p.copy() for p in parts if p not in moving]
        s2.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
        having = s2.args.get("having")
        conds = ([having.this] if having is not None else []) + [p.copy() for p in moving]
        s2.set("having", exp.Having(this=exp.and_(*conds)))
        moved = " AND ".join(p.sql(dialect=ctx.dialect) for p in moving)
        out.append(Proposal(new, name, "a condition on an aggregate belongs in HAVING, not WHERE",
                            f"WHERE {moved}", f"HAVING {moved}", 0.1, group="having"))
    return out
