"""Type-based pruning: catalog types checked against comparison operators and function signatures.

A candidate whose edit introduces a comparison or a function call that cannot type-check (a text
column compared with ``'leo'``'s numeric counterpart, ``sum`` over a text column, ...) is cut
before it is executed or ranked. Only *new* mismatches count, so a query the engine tolerates
(SQLite compares anything) is not rejected for what it already contained.
"""

from __future__ import annotations

import re
from typing import Literal

from sqlglot import exp

from actsagent.safeql.analyze import Analysis

Cat = Literal["num", "text", "date", "bool", "any"]

_NUMERIC_AGGS = (exp.Sum, exp.Avg, exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance)
_TEXT_FUNCS = (exp.Upper, exp.Lower, exp.Trim, exp.Substring, exp.Concat, exp.DPipe, exp.TimeToStr, exp.Initcap)
_NUM_FUNCS = (exp.Count, exp.Sum, exp.Avg, exp.Length, exp.Abs, exp.Round, exp.Floor, exp.Ceil, exp.Extract)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


def column_category(type_name: str | None) -> Cat:
    t = (type_name or "").lower()
    if not t:
        return "any"
    if any(k in t for k in ("int", "numeric", "decimal", "real", "double", "float", "serial", "number", "money")):
        return "num"
    if any(k in t for k in ("timestamp", "date", "time")):
        return "date"
    if "bool" in t:
        return "bool"
    if any(k in t for k in ("char", "text", "clob", "string", "name", "uuid")):
        return "text"
    return "any"


def literal_categories(lit: exp.Literal) -> set[Cat]:
    """What a literal can stand for: ``'2014'`` is text or a number; ``'leo'`` only text."""
    if not lit.is_string:
        return {"num"}
    v = lit.this.strip()
    cats: set[Cat] = {"text"}
    try:
        float(v)
        cats.add("num")
    except ValueError:
        pass
    if _DATE_RE.match(v):
        cats.add("date")
    if v.lower() in ("true", "false", "t", "f"):
        cats.add("bool")
    return cats


class TypeChecker:
    def __init__(self, analysis: Analysis, dialect: str) -> None:
        self.an = analysis
        self.dialect = dialect

    def infer(self, e: exp.Expr) -> tuple[set[Cat], bool]:
        """Possible categories of ``e`` and whether it is a column (SQLite applies column affinity)."""
        if isinstance(e, exp.Paren):
            return self.infer(e.this)
        if isinstance(e, exp.Column):
            ci = self.an.column_info(e)
            return ({column_category(ci.type)} if ci else {"any"}), True
        if isinstance(e, exp.Literal):
            return literal_categories(e), False
        if isinstance(e, exp.Null):
            return {"any"}, False
        if isinstance(e, exp.Boolean):
            return {"bool"}, False
        if isinstance(e, exp.Cast):
            return {column_category(e.to.sql())}, False
        if isinstance(e, _NUM_FUNCS) or (
            isinstance(e, exp.Binary) and isinstance(e, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod)
        ):
            return {"num"}, False
        if isinstance(e, _TEXT_FUNCS):
            return {"text"}, False
        if isinstance(e, exp.Anonymous) and e.name.lower() in ("strftime", "to_char", "substr", "replace"):
            return {"text"}, False
        if isinstance(e, exp.Max | exp.Min):
            return self.infer(e.this)
        return {"any"}, False

    def compatible(self, a: exp.Expr, b: exp.Expr) -> bool:
        ca, col_a = self.infer(a)
        cb, col_b = self.infer(b)
        if "any" in ca or "any" in cb or ca & cb:
            return True
        if self.dialect == "sqlite":
            # dates are text in SQLite, and a text-affinity column turns the other operand into text
            ea = ca | ({"text"} if "date" in ca else set())
            eb = cb | ({"text"} if "date" in cb else set())
            if (col_a and "text" in ea) or (col_b and "text" in eb):
                return True
            return bool(ea & eb)
        return False

    def mismatches(self, root: exp.Expr | None = None) -> list[exp.Expr]:
        """Comparisons and numeric aggregates that cannot type-check."""
        out: list[exp.Expr] = []
        for node in (root or self.an.ast).walk():
            if isinstance(node, exp.EQ | exp.NEQ | exp.GT | exp.GTE | exp.LT | exp.LTE):
                if not self.compatible(node.left, node.right):
                    out.append(node)
            elif isinstance(node, exp.In) and node.args.get("expressions"):
                if any(not self.compatible(node.this, v) for v in node.expressions):
                    out.append(node)
            elif isinstance(node, _NUMERIC_AGGS):
                cats, _ = self.infer(node.this)
                if "any" not in cats and "num" not in cats:
                    out.append(node)
            elif isinstance(node, exp.Like | exp.ILike):
                cats, _ = self.infer(node.this)
                if self.dialect == "postgres" and cats == {"num"}:
                    out.append(node)
        return out


def count_mismatches(analysis: Analysis, dialect: str) -> int:
    return len(TypeChecker(analysis, dialect).mismatches())


def mismatch_keys(analysis: Analysis, dialect: str) -> frozenset[str]:
    """The mismatched expressions as SQL text, so a child can be checked for *new* ones."""
    return frozenset(m.sql(dialect=dialect) for m in TypeChecker(analysis, dialect).mismatches())
