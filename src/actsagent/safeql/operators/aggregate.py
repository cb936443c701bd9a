"""Aggregate refinement: a condition on an aggregate written in WHERE moves to HAVING, and a nested
aggregate such as ``MAX(COUNT(*))`` becomes an aggregate over a grouped derived table, or the
grouped count ordered with LIMIT 1 (SQLite: "misuse of aggregate"; PostgreSQL: "aggregate functions
are not allowed in WHERE" / "aggregate function calls cannot be nested")."""

from __future__ import annotations

import re

from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = name_ = "aggregate"
handles = frozenset({"other"})
_MESSAGES = (
    "misuse of aggregate",
    "aggregate functions are not allowed in where",
    "aggregate function calls cannot be nested",
    "must appear in the group by clause",
)
_UNGROUPED = re.compile(r'column "([^"]+)" must appear in the GROUP BY clause', re.I)


def _conjuncts(e: exp.Expr) -> list[exp.Expr]:
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    if isinstance(e, exp.Paren) and isinstance(e.this, exp.And):
        return _conjuncts(e.this)
    return [e]


def _has_own_aggregate(e: exp.Expr) -> bool:
    """An aggregate of this query level, not one inside a subquery."""
    return any(agg.find_ancestor(exp.Subquery) is None for agg in e.find_all(exp.AggFunc))


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.ast is None or not any(m in failure.message.lower() for m in _MESSAGES):
        return []
    out = _unnest(ctx) + _ungrouped(ctx, failure)
    for select in ctx.tree.find_all(exp.Select):
        order = select.args.get("order")
        if select.args.get("group") is None and order is not None and any(True for _ in order.find_all(exp.AggFunc)):
            keys = _plain_projections(select)
            if keys:  # ORDER BY count(*) means per group: group by what the query shows
                new, (s2,) = copy_at(ctx.tree, select)
                s2.set("group", exp.Group(expressions=keys))
                shown = ", ".join(k.sql(dialect=ctx.dialect) for k in keys)
                out.append(
                    Proposal(
                        new,
                        name,
                        "ordering by an aggregate needs groups; group by the selected columns",
                        "",
                        f"GROUP BY {shown}",
                        0.15,
                        group="group",
                    )
                )
        where = select.args.get("where")
        if where is None:
            continue
        parts = _conjuncts(where.this)
        moving = [p for p in parts if _has_own_aggregate(p) and p.find(exp.Select) is None]
        if not moving:
            continue
        new, (s2,) = copy_at(ctx.tree, select)
        keep = [p.copy() for p in parts if p not in moving]
        s2.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
        having = s2.args.get("having")
        conds = ([having.this] if having is not None else []) + [p.copy() for p in moving]
        s2.set("having", exp.Having(this=exp.and_(*conds)))
        if s2.args.get("group") is None:
            keys = _plain_projections(s2)
            if keys is None:
                continue
            if keys:  # HAVING needs an aggregate query: group by what the query shows
                s2.set("group", exp.Group(expressions=keys))
        moved = " AND ".join(p.sql(dialect=ctx.dialect) for p in moving)
        out.append(
            Proposal(
                new,
                name,
                "a condition on an aggregate belongs in HAVING, not WHERE",
                f"WHERE {moved}",
                f"HAVING {moved}",
                0.1,
                group="having",
            )
        )
    return out


def _plain_projections(select: exp.Select) -> list[exp.Expr] | None:
    """The non-aggregate expressions of the select list; None when it selects ``*``."""
    keys = []
    for e in select.expressions:
        e = e.this if isinstance(e, exp.Alias) else e
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            return None
        if not any(True for _ in e.find_all(exp.AggFunc)):
            keys.append(e.copy())
    return keys


def _nested(select: exp.Select) -> list[tuple[exp.AggFunc, exp.AggFunc]]:
    out = []
    for outer in select.find_all(exp.Max, exp.Min, exp.Avg, exp.Sum):
        inner = outer.this
        if isinstance(inner, exp.AggFunc) and outer.find_ancestor(exp.Select) is select:
            out.append((outer, inner))
    return out


def _group_for(select: exp.Select) -> list[exp.Expr] | None:
    """The GROUP BY the nested aggregate means: its own, else that of the enclosing query."""
    group = select.args.get("group")
    if group is not None:
        return [e.copy() for e in group.expressions]
    outer = select.parent.find_ancestor(exp.Select) if select.parent else None
    if outer is not None and outer.args.get("group") is not None:
        return [e.copy() for e in outer.args["group"].expressions]
    return None


def _unnest(ctx: Context) -> list[Proposal]:
    out = []
    for select in ctx.tree.find_all(exp.Select):
        for outer, inner in _nested(select)[:1]:
            keys = _group_for(select)
            if not keys:
                continue
            kind = type(outer).__name__.upper()
            # 1. aggregate over a grouped derived table
            new, (s2, o2) = copy_at(ctx.tree, select, outer)
            sub = exp.select(exp.alias_(o2.this.copy(), "agg_value"))
            for k in ("from_", "from", "joins", "where"):
                if s2.args.get(k) is not None:
                    sub.set(k, s2.args[k].copy())
            sub.set("group", exp.Group(expressions=keys))
            if (len(s2.expressions) == 1 and s2.expressions[0] is o2) or (
                isinstance(s2.expressions[0], exp.Alias) and s2.expressions[0].this is o2
            ):
                rebuilt = exp.select(type(o2)(this=exp.column("agg_value", table="grouped")))
                rebuilt.set(
                    "from_",
                    exp.From(this=exp.Subquery(this=sub, alias=exp.TableAlias(this=exp.to_identifier("grouped")))),
                )
                s2.replace(rebuilt)
                out.append(
                    Proposal(
                        new,
                        name,
                        f"{kind}() over {inner.sql(dialect=ctx.dialect)} needs a grouped derived table",
                        outer.sql(dialect=ctx.dialect),
                        f"{kind}(agg_value) FROM (... GROUP BY ...)",
                        0.15,
                        group="nested",
                    )
                )
            # 2. the grouped aggregate itself, ordered, first row
            if select.args.get("group") is not None:
                new, (s2, o2) = copy_at(ctx.tree, select, outer)
                o2.replace(o2.this.copy())
                s2.set(
                    "order", exp.Order(expressions=[exp.Ordered(this=inner.copy(), desc=isinstance(outer, exp.Max))])
                )
                s2.set("limit", exp.Limit(expression=exp.Literal.number(1)))
                out.append(
                    Proposal(
                        new,
                        name,
                        f"{kind}() of a grouped {inner.sql(dialect=ctx.dialect)} is its first row when ordered",
                        outer.sql(dialect=ctx.dialect),
                        f"ORDER BY {inner.sql(dialect=ctx.dialect)} LIMIT 1",
                        0.2,
                        group="nested",
                    )
                )
    return out


def _ungrouped(ctx: Context, failure: Failure) -> list[Proposal]:
    """PostgreSQL: a selected column is neither grouped nor aggregated. Group by it, or aggregate it."""
    m = _UNGROUPED.search(failure.message)
    if not m:
        return []
    parts = m.group(1).split(".")
    name, qual = parts[-1].lower(), (parts[-2].lower() if len(parts) > 1 else None)
    out = []
    for select in ctx.tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is None:
            continue
        hits = [
            c
            for c in select.find_all(exp.Column)
            if c.name.lower() == name
            and (qual is None or not c.table or c.table.lower() == qual)
            and c.find_ancestor(exp.Select) is select
            and c.find_ancestor(exp.AggFunc) is None
        ]
        if not hits:
            continue
        col = hits[0]
        new, (s2,) = copy_at(ctx.tree, select)
        s2.args["group"].append("expressions", col.copy())
        out.append(
            Proposal(
                new,
                name_,
                f"{col.sql(dialect=ctx.dialect)} is selected but not grouped: group by it",
                "",
                f"GROUP BY ..., {col.sql(dialect=ctx.dialect)}",
                0.15,
                group="ungrouped",
            )
        )
        new, cols = copy_at(ctx.tree, *[h for h in hits if h.find_ancestor(exp.Group) is None])
        for c in cols:
            c.replace(exp.Max(this=c.copy()))
        out.append(
            Proposal(
                new,
                name_,
                f"{col.sql(dialect=ctx.dialect)} is selected but not grouped: take one value per group",
                col.sql(dialect=ctx.dialect),
                f"MAX({col.sql(dialect=ctx.dialect)})",
                0.2,
                group="ungrouped",
            )
        )
        break
    return out
