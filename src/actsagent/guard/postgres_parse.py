"""The second, independent reading for PostgreSQL: the regenerated SQL parsed by PostgreSQL's own parser.

sqlglot decides what the input means; the server decides what runs. libpg_query (through pglast) is the
server's grammar, so the names it reports are the names PostgreSQL resolves: every function call (SQL
syntax such as EXTRACT or TRIM included, as ``pg_catalog.extract``, ``pg_catalog.btrim``), every field
selection attribute notation may turn into a call, every relation. SQL it cannot parse is refused.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from actsagent.guard.rules import Refused, Rules

_pg: ModuleType | None
try:
    from pglast import parser as _pg_parser

    _pg = _pg_parser
except ImportError:  # pragma: no cover - a dependency; without it PostgreSQL queries are refused
    _pg = None

_WRITES = frozenset({"InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"})


def check_with_postgres_parser(sql: str, rules: Rules) -> None:
    """Raise ``Refused`` unless PostgreSQL reads ``sql`` as one SELECT whose calls, fields and relations pass."""
    if _pg is None:
        raise Refused(
            "unsupported",
            "PostgreSQL's parser (the pglast package) is not installed, and the guard does "
            "not pass PostgreSQL queries it cannot read as the server does",
        )
    try:
        parsed = json.loads(_pg.parse_sql_json(sql))
    except _pg.ParseError as e:
        raise Refused(
            "roundtrip", f"PostgreSQL's parser does not accept the regenerated SQL ({e}); simplify the query"
        ) from e
    stmts = parsed.get("stmts") or []
    if len(stmts) != 1 or list(stmts[0].get("stmt") or {}) != ["SelectStmt"]:
        kinds = ", ".join(k for s in stmts for k in (s.get("stmt") or {})) or "nothing"
        raise Refused("not_read_only", f"PostgreSQL reads the regenerated SQL as {kinds}, not one SELECT")
    stack: list[Any] = [stmts[0]["stmt"]]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        for key, value in node.items():
            if key == "FuncCall":
                _call(value, rules)
            elif key == "ColumnRef":
                _fields(value.get("fields") or [], 1, rules, on_expression=False)
            elif key == "A_Indirection":
                _fields(value.get("indirection") or [], 0, rules, on_expression=True)
            elif key == "RangeVar":
                rules.relation(value.get("schemaname"), value.get("relname") or "")
            elif key == "A_Expr" and len(value.get("name") or []) > 1:
                op = _names(value["name"])
                if op[0] != "pg_catalog":
                    raise Refused(
                        "qualified_function",
                        f"the operator OPERATOR({'.'.join(op)}) is schema-qualified; use the plain operator",
                        offending=".".join(op),
                    )
            elif key in _WRITES:
                raise Refused(
                    "write", "PostgreSQL reads a data-modifying statement in the regenerated SQL", offending=key
                )
            elif key in ("intoClause", "lockingClause"):
                raise Refused("not_read_only", f"PostgreSQL reads {key} in the regenerated SQL", offending=key)
            if isinstance(value, (dict, list)):
                stack.append(value)


def _names(items: list[dict]) -> list[str]:
    return [i["String"]["sval"] for i in items if "String" in i]


def _call(node: dict, rules: Rules) -> None:
    names = _names(node.get("funcname") or [])
    if not names:
        raise Refused("unknown_function", "PostgreSQL reads a function call without a name")
    name, qualifier = names[-1], names[:-1]
    if qualifier and qualifier != ["pg_catalog"]:
        rules.qualifier(".".join(qualifier), name)
    rules.call(name)
    if name.lower() == "current_setting":
        args = node.get("args") or []
        first = (args[0].get("A_Const") or {}).get("sval") if args else None
        second_ok = len(args) < 2 or "boolval" in (args[1].get("A_Const") or {})
        rules.setting(first.get("sval") if isinstance(first, dict) else None, len(args) > 2 or not second_ok)


def _fields(items: list[dict], skip: int, rules: Rules, on_expression: bool) -> None:
    """Field names after the first part of ``a.b.c`` (or every field of ``(expr).b.c``): any may be a call."""
    names = _names(items)
    for i, item in enumerate(items):
        if i >= skip and "String" in item:
            name = item["String"]["sval"]
            shown = f"(...).{name}" if on_expression else ".".join(names)
            rules.field(name, name, on_expression, shown)
