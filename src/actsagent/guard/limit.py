"""Cap the rows a read query can return, by editing its tree (the dialect prints its own form).

A LIMIT bounds the rows returned, not the rows scanned: the statement timeout bounds the rest.
"""

from __future__ import annotations

from sqlglot import exp

from actsagent.guard.models import LimitAction

WRAP_ALIAS = "guard_rows"


def apply_row_limit(tree: exp.Expr, cap: int) -> tuple[exp.Expr, int | None, LimitAction]:
    """Return (tree, the LIMIT it now carries, what was done). A limit at or below ``cap`` is kept."""
    if isinstance(tree, exp.Subquery) and set(k for k, v in tree.args.items() if v) == {"this"}:
        tree = tree.this  # "(SELECT ...)": the parentheses carry nothing
    if isinstance(tree, exp.Values):
        if len(tree.expressions) <= cap:
            return tree, None, "kept"
        return _wrap(tree, cap), cap, "wrapped"
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        return _wrap(tree, cap), cap, "wrapped"
    limit = tree.args.get("limit")
    if limit is None:
        tree.set("limit", exp.Limit(expression=exp.Literal.number(cap)))
        return tree, cap, "added"
    if isinstance(limit, exp.Limit):
        n = _int_literal(limit.expression)
        if n is None:  # LIMIT ALL, LIMIT -1, LIMIT (SELECT ...), LIMIT NULL: bound it from outside
            return _wrap(tree, cap), cap, "wrapped"
        if n > cap:
            limit.set("expression", exp.Literal.number(cap))
            return tree, cap, "lowered"
        return tree, n, "kept"
    if isinstance(limit, exp.Fetch):
        options = limit.args.get("limit_options")
        if options is not None and (options.args.get("with_ties") or options.args.get("percent")):
            return _wrap(tree, cap), cap, "wrapped"  # WITH TIES / PERCENT can exceed the count
        count = limit.args.get("count")
        n = 1 if count is None else _int_literal(count)
        if n is None:
            return _wrap(tree, cap), cap, "wrapped"
        if n > cap:
            limit.set("count", exp.Literal.number(cap))
            return tree, cap, "lowered"
        return tree, n, "kept"
    return _wrap(tree, cap), cap, "wrapped"


def _int_literal(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.is_int:
        return int(node.name)
    return None


def _wrap(tree: exp.Expr, cap: int) -> exp.Select:
    """SELECT * FROM (<tree>) AS guard_rows LIMIT cap: for limits that are not a plain number."""
    sub = exp.Subquery(this=tree, alias=exp.TableAlias(this=exp.to_identifier(WRAP_ALIAS)))
    return exp.Select(expressions=[exp.Star()]).from_(sub).limit(cap)
