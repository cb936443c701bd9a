"""Split a query into flat, independently checkable sub-queries (the split half of split_and_fix).

Each *unit* (the main query, every CTE, every derived table) yields clause-level queries: join,
filter, projection, aggregation, order, and the unit itself. References to other units are
replaced by empty stand-ins with the dependency's output columns, so every sub-query can run at
the same time and each error belongs to one clause: empty temporary tables where the database
is writable (a sandbox), empty CTEs (``WITH dep(c..) AS (SELECT CAST(NULL AS type).. WHERE 1 = 0)``)
in read-only transactions, where CREATE TEMPORARY TABLE is not allowed. Types come from sqlglot's annotation against the real schema (TEXT when
unknown). Deterministic: no LLM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Tokenizer, TokenType

ClauseKind = Literal["unit", "join", "filter", "projection", "aggregation", "order"]

_CLAUSE_TOKENS = {
    TokenType.WITH: "WITH",
    TokenType.SELECT: "SELECT",
    TokenType.FROM: "FROM",
    TokenType.JOIN: "JOIN",
    TokenType.ON: "JOIN ... ON",
    TokenType.WHERE: "WHERE",
    TokenType.GROUP_BY: "GROUP BY",
    TokenType.HAVING: "HAVING",
    TokenType.ORDER_BY: "ORDER BY",
    TokenType.LIMIT: "LIMIT",
    TokenType.UNION: "UNION",
    TokenType.USING: "JOIN ... USING",
}
_CLAUSE_RE = re.compile(r"\b(WITH|SELECT|FROM|JOIN|ON|WHERE|GROUP\s+BY|HAVING|ORDER\s+BY|LIMIT|UNION|USING)\b", re.I)


@dataclass
class Unit:
    name: str
    select: exp.Expr
    depends_on: list[str] = field(default_factory=list)


@dataclass
class ClauseQuery:
    unit: str
    kind: ClauseKind
    sql: str
    depends_on: list[str]


def _arg_key(node: exp.Expr, *names: str) -> str | None:
    return next((n for n in names if n in node.arg_types), None)


def _with_key(node: exp.Expr) -> str | None:
    return _arg_key(node, "with_", "with")


def _from_key(node: exp.Expr) -> str | None:
    return _arg_key(node, "from_", "from")


def collect_units(tree: exp.Expr) -> list[Unit]:
    """Units in dependency order: CTEs first, then derived tables, the main query last."""
    units: list[Unit] = []
    tree = tree.copy()
    wk = _with_key(tree)
    with_ = tree.args.get(wk) if wk else None
    names: list[str] = []
    if wk and with_ is not None:
        for cte in with_.expressions:
            names.append(cte.alias_or_name)
            units.extend(_units_of(cte.this, cte.alias_or_name, names))
        tree.set(wk, None)
    units.extend(_units_of(tree, "main", names))
    return units


def _units_of(node: exp.Expr, name: str, known: list[str]) -> list[Unit]:
    out: list[Unit] = []
    node = node.copy()
    if isinstance(node, exp.Select):
        for sub in list(node.find_all(exp.Subquery)):
            holder = sub.parent
            if isinstance(holder, exp.From | exp.Join) and holder.parent is node and sub.alias:
                alias = sub.alias
                out.extend(_units_of(sub.this, alias, known))
                known = [*known, alias]
                sub.replace(exp.to_table(alias))
    deps = sorted({t.name for t in node.find_all(exp.Table) if t.name in known and not t.db})
    out.append(Unit(name=name, select=node, depends_on=deps))
    return out


def clause_queries(unit: Unit) -> list[tuple[ClauseKind, exp.Expr]]:
    """The flat queries that check one clause each, plus the unit itself."""
    s = unit.select
    out: list[tuple[ClauseKind, exp.Expr]] = []
    fk = _from_key(s) if isinstance(s, exp.Select) else None
    if not isinstance(s, exp.Select) or fk is None or s.args.get(fk) is None:
        return [("unit", s)]

    def base(expressions: list[exp.Expr]) -> exp.Select:
        q = s.copy()
        for k in ("where", "group", "having", "order", "limit", "offset", "distinct", "qualify", "windows"):
            if k in q.arg_types:
                q.set(k, None)
        q.set("expressions", expressions)
        return q

    one: list[exp.Expr] = [exp.Literal.number(1)]
    has_agg = bool(s.args.get("group") or s.args.get("having")) or any(
        e.find(exp.AggFunc) is not None for e in s.expressions
    )
    if s.args.get("joins"):
        out.append(("join", base(one).limit(5)))
    if s.args.get("where") is not None:
        q = base(one)
        q.set("where", s.args["where"].copy())
        out.append(("filter", q.limit(5)))
    if has_agg:
        q = base([e.copy() for e in s.expressions])
        for k in ("group", "having", "where"):
            if s.args.get(k) is not None:
                q.set(k, s.args[k].copy())
        out.append(("aggregation", q.limit(5)))
    else:
        out.append(("projection", base([e.copy() for e in s.expressions]).limit(5)))
    if s.args.get("order") is not None:
        q = s.copy()
        q.set("limit", None)
        out.append(("order", q.limit(5)))
    out.append(("unit", s))
    return out


def output_columns(unit: Unit, dialect: str, schema: dict[str, dict[str, str]]) -> list[tuple[str, str]] | None:
    """(name, type) of a unit's output, or None when it cannot be known statically (``*``)."""
    s = unit.select
    if not isinstance(s, exp.Select) or any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star) for e in s.expressions
    ):
        return None
    names = s.named_selects
    types = ["TEXT"] * len(names)
    sg_schema: dict[str, object] = dict(schema)  # sqlglot types its schema argument as dict[str, object]
    try:
        from sqlglot.optimizer.annotate_types import annotate_types
        from sqlglot.optimizer.qualify import qualify

        typed = annotate_types(
            qualify(s.copy(), schema=sg_schema, dialect=dialect, validate_qualify_columns=False),
            schema=sg_schema,
            dialect=dialect,
        )
        for i, e in enumerate(typed.expressions):
            t = e.type
            if t is not None and not t.is_type(exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL):
                types[i] = t.sql(dialect=dialect)
    except Exception:
        pass
    if len(names) != len(s.expressions) or not all(names):
        return None
    return list(zip(names, types, strict=True))


def _quoted(name: str, dialect: str) -> str:
    return exp.to_identifier(name).sql(dialect=dialect)


def stub_cte(name: str, cols: list[tuple[str, str]], dialect: str) -> str:
    casts = ", ".join(f"CAST(NULL AS {t})" for _, t in cols)
    names = ", ".join(_quoted(c, dialect) for c, _ in cols)
    return f"{_quoted(name, dialect)}({names}) AS (SELECT {casts} WHERE 1 = 0)"


def temp_table(name: str, cols: list[tuple[str, str]], dialect: str) -> str:
    columns = ", ".join(f"{_quoted(c, dialect)} {t}" for c, t in cols)
    return f"CREATE TEMPORARY TABLE {_quoted(name, dialect)} ({columns}) ON COMMIT DROP"


def decompose(
    sql: str, dialect: str, schema: dict[str, dict[str, str]], *, temp_tables: bool = False
) -> list[ClauseQuery]:
    """All clause queries of ``sql`` with empty stand-ins for their dependencies; raises ParseError.

    ``temp_tables``: the stand-ins are empty ``CREATE TEMPORARY TABLE ... ON COMMIT DROP`` tables
    created in the sub-query's own transaction (a script; needs a writable database); otherwise
    they are empty CTEs, which a read-only transaction accepts.
    """
    tree = sqlglot.parse_one(sql, read=dialect)
    units = collect_units(tree)
    by_name = {u.name: u for u in units}
    columns: dict[str, list[tuple[str, str]]] = {}
    for u in units:
        cols = output_columns(u, dialect, schema)
        if cols is not None:
            columns[u.name] = cols
    stubs = {name: stub_cte(name, cols, dialect) for name, cols in columns.items()}
    out: list[ClauseQuery] = []
    for u in units:
        prefix, creates = [], []
        for d in _closure(u, by_name, stubs):
            if d in stubs and temp_tables:
                creates.append(temp_table(d, columns[d], dialect))
            elif d in stubs:
                prefix.append(stubs[d])
            else:  # cannot stub (SELECT *): keep the real definition, at the cost of independence
                prefix.append(
                    f"{exp.to_identifier(d).sql(dialect=dialect)} AS ({by_name[d].select.sql(dialect=dialect)})"
                )
        for kind, q in clause_queries(u):
            body = q.sql(dialect=dialect)
            text = f"WITH {', '.join(prefix)} {body}" if prefix else body
            if creates:
                text = ";\n".join([*creates, text])
            out.append(ClauseQuery(unit=u.name, kind=kind, sql=text, depends_on=list(u.depends_on)))
    return out


def _closure(u: Unit, by_name: dict[str, Unit], stubs: dict[str, str]) -> list[str]:
    """Dependencies to define: stubbed ones directly, un-stubbable ones with their own dependencies."""
    seen: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        # a recursive CTE refers to itself: only its stand-in can break the cycle
        if name in seen or name in visiting or name not in by_name:
            return
        if name not in stubs and (name == u.name or name in visiting):
            return
        visiting.add(name)
        if name not in stubs:
            for d in by_name[name].depends_on:
                visit(d)
        visiting.discard(name)
        seen.append(name)

    for d in u.depends_on:
        visit(d)
    return seen


def clause_at(sql: str, position: int | None) -> tuple[str | None, str]:
    """The clause holding character ``position`` (1-based) and a snippet around it."""
    if position is None or position < 1:
        return None, ""
    pos = position - 1
    snippet = sql[max(0, pos - 30) : pos + 30].replace("\n", " ")
    clause = None
    try:
        for tok in Tokenizer().tokenize(sql):
            if tok.start > pos:
                break
            if tok.token_type in _CLAUSE_TOKENS:
                clause = _CLAUSE_TOKENS[tok.token_type]
    except Exception:
        for m in _CLAUSE_RE.finditer(sql[: pos + 1]):
            clause = re.sub(r"\s+", " ", m.group(1).upper())
    return clause, snippet


def line_col_to_position(sql: str, line: int, col: int) -> int:
    lines = sql.split("\n")
    return sum(len(x) + 1 for x in lines[: max(0, line - 1)]) + col
