"""Join refinement: bring in the table that holds a missing column, with an explicit JOIN ... ON."""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.locate import locate_columns
from actsagent.safeql.operators._edit import ident, join_condition, set_column, spelled_as
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = "join"
handles = frozenset({"unknown_column"})


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    an = ctx.analysis
    if an is None:
        return []
    group = locate_columns(an, failure)
    if not group:
        return []
    first = group[0]
    scope = first.scope
    select = scope.select
    if not isinstance(select, exp.Select) or not (select.args.get("from_") or select.args.get("from")):
        return []
    cname = first.column.name
    present = [s for s in scope.sources.values() if s.table is not None]
    in_use = {s.table.name.lower() for s in present if s.table is not None}
    out = []
    seen = set()
    cands = [(c, d) for c, d in ctx.catalog.nearest_columns(cname, None) if c.table.name.lower() not in in_use]
    for cref, dcol in cands[: ctx.options.k * 3]:
        table = cref.table
        if table.name.lower() in seen:
            continue
        # prefer joining to the source the column was qualified with
        order = ([first.source] if first.source is not None and first.source.table is not None else []) + present
        cond = None
        for left in order:
            cond = join_condition(left, table, table.name, ctx.catalog, ctx.dialect)
            if cond is not None:
                break
        if cond is None:
            continue
        seen.add(table.name.lower())
        new, nodes = copy_at(ctx.tree, select, *[r.column for r in group])
        sel2, cols = nodes[0], [c for c in nodes[1:] if isinstance(c, exp.Column)]
        sel2.append("joins", exp.Join(this=exp.Table(this=ident(table.name, ctx.dialect)), on=cond, kind="INNER"))
        for c in cols:
            renamed = not spelled_as(
                c.this if isinstance(c.this, exp.Identifier) else None, cref.column.name, ctx.dialect
            )
            set_column(c, cref.column.name if renamed else None, None, ctx.dialect)
            c.set("table", ident(table.name, ctx.dialect))  # the joined table's own name, spelled as stored
        out.append(
            Proposal(
                new,
                name,
                f"column {cname!r} is not in the FROM tables; join {table.name!r} on {cond.sql(dialect=ctx.dialect)}",
                cname,
                f"{table.name}.{cref.column.name}",
                dcol,
                group=cname,
            )
        )
    return out
