"""Relation refinement: replace a table that does not exist, or one that lacks the column asked of it."""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import copy_at, follow, node_path
from actsagent.safeql.locate import locate_columns, locate_tables
from actsagent.safeql.operators._edit import alias_ident, ident, refs_in_scope, set_column, spelled_as
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = "relation"
handles = frozenset({"unknown_relation", "unknown_column"})


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.analysis is None:
        return []
    if failure.kind == "unknown_relation":
        return _replace_unknown(ctx, failure)
    return _replace_for_column(ctx, failure)


def _replace_unknown(ctx: Context, failure: Failure) -> list[Proposal]:
    an = ctx.scopes
    targets = locate_tables(an, failure, ctx.dialect)
    if not targets:
        return []
    target = targets[0]
    scope = an.scope_of(target)
    same = an.schema.table(target.name)  # the table exists, spelled with another case: quote it as stored
    in_use = (
        {s.table.name.lower() for s in scope.sources.values() if s.table is not None and s.table is not same}
        if scope
        else set()
    )
    nearest = ctx.catalog.nearest_tables(target.name, ctx.options.k * 3, exclude=in_use)
    if same is not None:
        nearest = [(same, 0.0)] + [(t, d) for t, d in nearest if t is not same]
    out = []
    for table, dist in nearest:
        new, (t2,) = copy_at(ctx.tree, target)
        old = target.name
        t2.set("this", ident(table.name, ctx.dialect))
        if not target.alias and scope is not None:  # qualifiers written with the old name follow it
            for c in refs_in_scope(an, scope, old):
                c2 = follow(new, node_path(c))
                c2.set("table", ident(table.name, ctx.dialect))
        out.append(
            Proposal(
                new,
                name,
                f"relation {old!r} does not exist; nearest table is {table.name!r}",
                old,
                table.name,
                dist,
                group=old,
            )
        )
    return out


def _replace_for_column(ctx: Context, failure: Failure) -> list[Proposal]:
    """The column exists elsewhere: swap the table it is taken from (alias kept)."""
    an = ctx.scopes
    group = locate_columns(an, failure)
    if not group:
        return []
    first = group[0]
    scope = first.scope
    cname = first.column.name
    if first.source is not None and first.source.table is not None:
        victims = [first.source]
    else:
        victims = [s for s in scope.sources.values() if s.table is not None]
    in_use = {s.table.name.lower() for s in scope.sources.values() if s.table is not None}
    out = []
    cands = [(c, d) for c, d in ctx.catalog.nearest_columns(cname, None) if c.table.name.lower() not in in_use]
    for cref, dcol in cands[: ctx.options.k * 2]:
        for victim in victims:
            vnode, vtable = victim.node, victim.table
            if not isinstance(vnode, exp.Table) or vtable is None:
                continue
            new, nodes = copy_at(ctx.tree, vnode, *[r.column for r in group])
            t2, cols = nodes[0], [c for c in nodes[1:] if isinstance(c, exp.Column)]
            t2.set("this", ident(cref.table.name, ctx.dialect))
            if not vnode.alias:
                t2.set("alias", exp.TableAlias(this=alias_ident(victim.alias, ctx.dialect)))
            for c in cols:
                renamed = not spelled_as(
                    c.this if isinstance(c.this, exp.Identifier) else None, cref.column.name, ctx.dialect
                )
                set_column(c, cref.column.name if renamed else None, None, ctx.dialect)
            dtab = ctx.catalog.token_distance(vtable.name, cref.table.name)
            before = f"{vtable.name}.{cname}"
            after = f"{cref.table.name}.{cref.column.name}"
            out.append(
                Proposal(
                    new,
                    name,
                    f"column {cname!r} is not in {vtable.name!r}; "
                    f"take the table {cref.table.name!r} that has {cref.column.name!r}",
                    before,
                    after,
                    dtab + dcol,
                    group=cname,
                )
            )
    return out
