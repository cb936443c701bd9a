"""Ambiguous column refinement: qualify the column with each FROM item that has it."""

from __future__ import annotations

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.locate import locate_ambiguous
from actsagent.safeql.operators._edit import set_column
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = "ambiguous"
handles = frozenset({"ambiguous_column"})


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.analysis is None:
        return []
    amb = locate_ambiguous(ctx.analysis, failure)
    if not amb:
        return []
    first = amb[0]
    group = [r for r in amb if r.scope is first.scope and r.column.name.lower() == first.column.name.lower()]
    out = []
    for i, src in enumerate(first.candidates):
        new, cols = copy_at(ctx.tree, *[r.column for r in group])
        for c in cols:
            set_column(c, None, src.alias, ctx.dialect)
        out.append(
            Proposal(
                new,
                name,
                f"column {first.column.name!r} is in several FROM items; take it from {src.alias!r}",
                first.column.name,
                f"{src.alias}.{first.column.name}",
                0.01 * i,
                group=first.column.name,
            )
        )
    return out
