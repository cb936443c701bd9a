"""Find the AST occurrence an engine error is about: by identifier, position and scope analysis."""

from __future__ import annotations

from sqlglot import exp

from actsagent.safeql.analyze import Analysis, Resolution
from actsagent.safeql.operators.base import Failure
from actsagent.safeql.quoting import spelled_as


def start_of(node: exp.Expr) -> int | None:
    """0-based character offset where ``node`` starts in the parsed text, when sqlglot kept it."""
    starts = []
    for n in node.walk():
        meta = getattr(n, "_meta", None) or {}
        if "start" in meta:
            starts.append(meta["start"])
    return min(starts) if starts else None


def _split_ident(ident: str | None) -> tuple[str | None, str | None]:
    if not ident:
        return None, None
    parts = [p.strip('"`[]') for p in ident.split(".")]
    return (parts[-2] if len(parts) > 1 else None), parts[-1]


def _by_position(nodes: list, failure: Failure, key=lambda x: x):
    pos = failure.position
    if pos is None or len(nodes) <= 1:
        return nodes
    # sqlglot keeps offsets of identifiers and literals, not of keywords such as EXTRACT: nearest wins
    dist = {id(n): abs(s - (pos - 1)) for n in nodes if (s := start_of(key(n))) is not None}
    if not dist:
        return nodes
    best = min(dist.values())
    return [n for n in nodes if dist.get(id(n)) == best] + [n for n in nodes if dist.get(id(n), -1) != best]


def locate_columns(an: Analysis, failure: Failure) -> list[Resolution]:
    """Unresolved columns the error names, grouped: all occurrences of the first (innermost) one."""
    qual, name = _split_ident(failure.identifier)
    bad = unresolved = [r for r in an.unresolved() if r.status in ("missing", "unknown_qualifier")]
    if name:
        named = [
            r
            for r in bad
            if r.column.name.lower() == name.lower()
            and (qual is None or (r.column.table or "").lower() == qual.lower())
        ]
        if not named:  # "missing FROM-clause entry for table x": the identifier is the qualifier
            named = [r for r in bad if (r.column.table or "").lower() == name.lower()]
        bad = named
    if name and not bad:
        # our analyzer resolved it (e.g. as an outer reference) where the engine did not: trust the engine
        same = [
            c
            for c in an.columns()
            if c.name.lower() == name.lower() and (qual is None or (c.table or "").lower() == qual.lower())
        ]
        fallback = []
        for c in same:
            r = an.resolve(c)
            scope = an.scope_of(c)
            if scope is not None:
                src = r.source if r.source is not None and r.scope is scope and qual else None
                fallback.append(Resolution(c, scope, "missing", src))
        fallback.sort(key=lambda r: -r.scope.depth)
        bad = fallback or unresolved
    bad = _by_position(bad, failure, key=lambda r: r.column)
    if not bad:
        return []
    first = bad[0]
    return [
        r
        for r in bad
        if r.scope is first.scope
        and r.column.name.lower() == first.column.name.lower()
        and (r.column.table or "").lower() == (first.column.table or "").lower()
    ]


def locate_ambiguous(an: Analysis, failure: Failure) -> list[Resolution]:
    _, name = _split_ident(failure.identifier)
    amb = [r for r in (an.resolve(c) for c in an.columns()) if r.status == "ambiguous"]
    if name:
        amb = [r for r in amb if r.column.name.lower() == name.lower()] or amb
    return _by_position(amb, failure, key=lambda r: r.column)


def locate_tables(an: Analysis, failure: Failure, dialect: str | None = None) -> list[exp.Table]:
    """Tables the catalog lacks, and (given ``dialect``) tables it has under another spelling: a bare
    ``Employees`` folds to ``employees`` in PostgreSQL and misses the table ``"Employees"``."""
    _, name = _split_ident(failure.identifier)
    cte_names = {c.alias.lower() for c in an.ast.find_all(exp.CTE)}

    def wrong(t: exp.Table) -> bool:
        known = an.schema.table(t.name)
        if known is None:
            return True
        return (
            dialect is not None and isinstance(t.this, exp.Identifier) and not spelled_as(t.this, known.name, dialect)
        )

    tables = [t for t in an.ast.find_all(exp.Table) if t.name and t.name.lower() not in cte_names and wrong(t)]
    if name:
        tables = [t for t in tables if t.name.lower() == name.lower()] or tables
    return _by_position(tables, failure)


def function_name(f: exp.Func) -> str:
    if isinstance(f, exp.Anonymous):
        return f.name
    return f.sql_name() if hasattr(f, "sql_name") else type(f).__name__


def locate_functions(ast: exp.Expr, failure: Failure) -> list[exp.Func]:
    _, name = _split_ident(failure.identifier)
    funcs = [f for f in ast.find_all(exp.Func) if not isinstance(f, exp.Binary | exp.Unary | exp.Predicate)]
    if name:
        funcs = [f for f in funcs if function_name(f).lower() == name.lower() or _named(f, name)]
    return _by_position(funcs, failure)


def _named(f: exp.Func, name: str) -> bool:
    if isinstance(f, exp.Anonymous):
        return f.name.lower() == name.lower()
    try:
        return name.upper() in type(f).sql_names()
    except Exception:  # some classes have no SQL names
        return False
