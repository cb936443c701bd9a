"""Function refinement: a function the engine lacks becomes the dialect's equivalent (sqlglot's
cross-dialect reading first, then a short table of equivalents sqlglot does not map), a nearby
function name of the same arity, or — when the function exists but not for these argument types —
the same call with its arguments cast to a signature it has."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from actsagent.safeql.analyze import copy_at
from actsagent.safeql.locate import locate_functions
from actsagent.safeql.operators.base import Context, Failure, Proposal

name = "function"
handles = frozenset({"unknown_function"})

_SOURCES = ("sqlite", "postgres", "mysql", "tsql", "duckdb", "bigquery", "oracle", "snowflake")
DIALECT_EQUIV = 0.1  # distance of an exact dialect translation: same meaning, other spelling

# Equivalents sqlglot's generators leave as they are. {0}, {1}... are the call's arguments.
_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "sqlite": {
        "year": ["CAST(strftime('%Y', {0}) AS INTEGER)"],
        "month": ["CAST(strftime('%m', {0}) AS INTEGER)"],
        "day": ["CAST(strftime('%d', {0}) AS INTEGER)"],
        "concat": ["{all_pipe}"],
        "divide": ["CAST({0} AS REAL) / {1}"],
        "datediff": ["julianday({0}) - julianday({1})", "julianday({1}) - julianday({0})"],
        "now": ["datetime('now')"],
        "curdate": ["date('now')"],
        "isnull": ["IFNULL({0}, {1})"],
        "nvl": ["IFNULL({0}, {1})"],
        "len": ["length({0})"],
        "char_length": ["length({0})"],
        "locate": ["instr({1}, {0})"],
        "strpos": ["instr({0}, {1})"],
        "if": ["CASE WHEN {0} THEN {1} ELSE {2} END"],
        "to_char": ["strftime({1}, {0})"],
        "left": ["substr({0}, 1, {1})"],
        "right": ["substr({0}, -{1})"],
        "multiply": ["({0}) * ({1})"],
    },
    "postgres": {
        "divide": ["CAST({0} AS NUMERIC) / {1}"],
        "julianday": ["(EXTRACT(EPOCH FROM CAST({0} AS TIMESTAMP)) / 86400.0 + 2440587.5)"],
        "instr": ["strpos({0}, {1})"],
        "ifnull": ["COALESCE({0}, {1})"],
        "iif": ["CASE WHEN {0} THEN {1} ELSE {2} END"],
        "year": ["EXTRACT(YEAR FROM CAST({0} AS TIMESTAMP))"],
        "month": ["EXTRACT(MONTH FROM CAST({0} AS TIMESTAMP))"],
        "day": ["EXTRACT(DAY FROM CAST({0} AS TIMESTAMP))"],
        "multiply": ["({0}) * ({1})"],
        "datetime": ["CAST({0} AS TIMESTAMP)"],
        "date": ["CAST({0} AS DATE)"],
        "group_concat": ["string_agg(CAST({0} AS TEXT), ',')"],
        "len": ["length({0})"],
    },
}


def _args(f: exp.Func) -> list[exp.Expr]:
    if isinstance(f, exp.Anonymous):
        return list(f.expressions)
    return [a for a in f.iter_expressions()]


def _fname(f: exp.Func) -> str:
    return (f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower()


def _translations(f: exp.Func, dialect: str) -> list[tuple[exp.Expr, str]]:
    text = f.sql(dialect=dialect)
    fname = _fname(f)
    seen = {text.lower()}
    out = []
    for src in _SOURCES:
        if src == dialect:
            continue
        try:
            g = sqlglot.parse_one(text, read=src)
            gen = g.sql(dialect=dialect)
            node = sqlglot.parse_one(gen, read=dialect)
        except Exception:  # sqlglot raises several error types for dialect-specific input
            continue
        if gen.lower() in seen or gen.lower().startswith(fname + "("):
            continue
        seen.add(gen.lower())
        out.append((node, f"{src} spelling of {fname}() in {dialect}"))
    args = [a.sql(dialect=dialect) for a in _args(f)]
    for tpl in _TEMPLATES.get(dialect, {}).get(fname, []):
        try:
            if tpl == "{all_pipe}":
                gen = " || ".join(args)
            else:
                gen = tpl.format(*args)
            node = sqlglot.parse_one(gen, read=dialect)
        except Exception:  # the template needs more arguments than the call has, or does not parse
            continue
        if gen.lower() in seen:
            continue
        seen.add(gen.lower())
        out.append((node, f"{dialect} equivalent of {fname}()"))
    return out


def propose(ctx: Context, failure: Failure) -> list[Proposal]:
    if ctx.ast is None:
        return []
    funcs = locate_functions(ctx.tree, failure)
    if not funcs:
        return []
    f = funcs[0]
    fname = _fname(f)
    before = f.sql(dialect=ctx.dialect)
    out: list[Proposal] = []
    for node, why in _translations(f, ctx.dialect):
        new, (f2,) = copy_at(ctx.tree, f)
        f2.replace(node)
        out.append(Proposal(new, name, why, before, node.sql(dialect=ctx.dialect), DIALECT_EQUIV, group="translate"))
    args = _args(f)
    if ctx.catalog.has_function(fname):
        # the name exists: the argument types do not match any signature, so cast them to one it has
        signatures = _signatures(ctx, fname, len(args))
        for i, arg in enumerate(args):
            if isinstance(arg, exp.Literal | exp.Star | exp.Var | exp.DataType):
                continue
            targets = signatures.get(i) or (
                ("INTEGER", "NUMERIC", "TEXT", "TIMESTAMP") if ctx.dialect == "postgres" else ("REAL", "TEXT")
            )
            for rank, target in enumerate(targets):
                new, (a2,) = copy_at(ctx.tree, arg)
                a2.replace(exp.Cast(this=a2.copy(), to=exp.DataType.build(target, dialect=ctx.dialect)))
                out.append(
                    Proposal(
                        new,
                        name,
                        f"{fname}() has no signature for this argument; cast it to {target}",
                        arg.sql(dialect=ctx.dialect),
                        f"CAST({arg.sql(dialect=ctx.dialect)} AS {target})",
                        0.2 + 0.01 * rank,
                        group=f"cast{i}",
                    )
                )
    else:
        for other, dist in ctx.catalog.nearest_functions(fname, ctx.options.k, arity=len(args)):
            new, (f2,) = copy_at(ctx.tree, f)
            f2.replace(exp.Anonymous(this=other, expressions=[a.copy() for a in args]))
            out.append(
                Proposal(
                    new,
                    name,
                    f"function {fname}() does not exist; nearest is {other}()",
                    fname,
                    other,
                    dist,
                    group="rename",
                )
            )
    return out


_PREFERRED = (
    "numeric",
    "integer",
    "bigint",
    "double precision",
    "text",
    "timestamp without time zone",
    "date",
    "timestamp with time zone",
)


def _signatures(ctx: Context, fname: str, nargs: int) -> dict[int, list[str]]:
    """Argument types PostgreSQL has for ``fname`` with ``nargs`` arguments, usual types first."""
    if ctx.dialect != "postgres" or not fname.replace("_", "").isalnum():
        return {}
    res = ctx.db.execute(
        f"SELECT proargtypes::regtype[]::text[] FROM pg_proc WHERE proname = '{fname.lower()}' "
        f"AND pronargs = {int(nargs)}",
        max_rows=200,
        timeout_s=2,
    )
    if not res.ok:
        return {}
    out: dict[int, list[str]] = {}
    for (types,) in res.rows:
        for i, t in enumerate(types or []):
            if t in _PREFERRED and t not in out.setdefault(i, []):
                out[i].append(t)
    return {i: sorted(ts, key=_PREFERRED.index) for i, ts in out.items()}
