"""Operator and type mismatch refinement: casts on the failing comparison.

PostgreSQL refuses ``text >= integer``; SQLite silently compares ``strftime(...) = 2014`` as
false, which shows up as an empty result. Either way one side is cast to the other's type, or a
cast the query already has is dropped.
"""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.locate import start_of
from actsagent.safeql.operators.base import EMPTY, Context, Failure, Proposal
from actsagent.safeql.types import TypeChecker

name = "mismatch"
handles = frozenset({"type_mismatch", EMPTY})

_SQL_TYPE = {
    "num": {"postgres": "NUMERIC", "sqlite": "INTEGER"},
    "text": {"postgres": "TEXT", "sqlite": "TEXT"},
    "date": {"postgres": "TIMESTAMP", "sqlite": "TEXT"},
}


def _comparisons(ctx: Context, failure: Failure) -> list[exp.Binary]:
    tc = TypeChecker(ctx.scopes, ctx.dialect)
    bad: list[exp.Binary] = [m for m in tc.mismatches() if isinstance(m, exp.Binary)]
    if failure.kind == EMPTY:
        return bad
    pos = failure.position
    if pos is not None:
        cmp_nodes: list[exp.Binary] = [
            n for n in ctx.tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like)
        ]
        near = sorted(cmp_nodes, key=lambda n: abs((start_of(n) or 0) - (pos - 1)))
        bad = bad + [n for n in near if n not in bad][:2]
    return bad


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.analysis is None:
        return []
    tc = TypeChecker(ctx.analysis, ctx.dialect)
    out = []
    for i, cmp in enumerate(_comparisons(ctx, failure)[:3]):
        sides = [cmp.left, cmp.right]
        for j, side in enumerate(sides):
            other = sides[1 - j]
            if isinstance(side, exp.Cast):
                new, (c2,) = copy_at(ctx.tree, side)
                c2.replace(c2.this.copy())
                out.append(
                    Proposal(
                        new,
                        name,
                        "drop the cast that breaks the comparison",
                        side.sql(dialect=ctx.dialect),
                        side.this.sql(dialect=ctx.dialect),
                        0.1,
                        group=f"cmp{i}",
                    )
                )
            cats, _ = tc.infer(other)
            for cat in ("num", "text", "date"):
                if cat not in cats and not ("any" in cats and cat != "date"):
                    continue
                target = _SQL_TYPE[cat][ctx.dialect]
                if isinstance(side, exp.Literal):
                    if cat == "num" and side.is_string:
                        try:
                            float(side.this)
                        except ValueError:
                            continue
                        new, (s2,) = copy_at(ctx.tree, side)
                        s2.replace(exp.Literal.number(side.this))
                        out.append(
                            Proposal(new, name, "compare as a number", side.sql(), side.this, 0.05, group=f"cmp{i}")
                        )
                        continue
                    if cat == "text" and not side.is_string:
                        new, (s2,) = copy_at(ctx.tree, side)
                        s2.replace(exp.Literal.string(side.this))
                        out.append(
                            Proposal(new, name, "compare as text", side.sql(), f"'{side.this}'", 0.05, group=f"cmp{i}")
                        )
                        continue
                new, (side2,) = copy_at(ctx.tree, side)
                side2.replace(exp.Cast(this=side2.copy(), to=exp.DataType.build(target, dialect=ctx.dialect)))
                out.append(
                    Proposal(
                        new,
                        name,
                        f"cast {side.sql(dialect=ctx.dialect)} to {target} to match {other.sql(dialect=ctx.dialect)}",
                        side.sql(dialect=ctx.dialect),
                        f"CAST(... AS {target})",
                        0.15,
                        group=f"cmp{i}",
                    )
                )
    return out
