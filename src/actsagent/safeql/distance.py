"""Structural distance: Zhang-Shasha tree edit distance (``zss``) between sqlglot ASTs, normalised.

Column references, tables and literals become single labelled leaves, so one renamed column costs
one relabel. Refinements are local, so both trees are walked in parallel and ``zss`` runs only on
the pairs of subtrees that differ (identical siblings cost nothing); this is the exact distance for
a local edit and an upper bound otherwise, and keeps each call in the sub-millisecond range.
"""

from __future__ import annotations

from functools import lru_cache

import zss
from sqlglot import exp


class LabelTree(zss.Node):
    """A tree node whose signature (its labels, children included) is its identity: equal signatures are
    equal trees, so a distance can be cached by them."""

    __slots__ = ("sig", "size")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelTree) and self.sig == other.sig

    def __hash__(self) -> int:
        return hash(self.sig)


def to_tree(e: exp.Expr) -> LabelTree:
    if isinstance(e, exp.Column):
        label = "col:" + ".".join(p.lower() for p in (e.table, e.name) if p)
        kids: list[exp.Expr] = []
    elif isinstance(e, exp.Table):
        label = "tab:" + e.name.lower() + (f" as {e.alias.lower()}" if e.alias else "")
        kids = []
    elif isinstance(e, exp.Literal):
        label = "lit:" + ("s:" if e.is_string else "n:") + e.this
        kids = []
    elif isinstance(e, exp.Identifier):
        label = "id:" + e.name.lower()
        kids = []
    elif isinstance(e, exp.DataType):
        label = "type:" + e.sql().lower()
        kids = []
    else:
        label = type(e).__name__
        if isinstance(e, exp.Anonymous):
            label += ":" + e.name.lower()
        kids = list(e.iter_expressions())
    node = LabelTree(label)
    for k in kids:
        node.addkid(to_tree(k))
    node.sig = label + "(" + ",".join(c.sig for c in node.children) + ")"
    node.size = 1 + sum(c.size for c in node.children)
    return node


def _ted(a: LabelTree, b: LabelTree) -> float:
    if a.sig == b.sig:
        return 0.0
    if a.label == b.label and len(a.children) == len(b.children):
        return float(sum(_ted(x, y) for x, y in zip(a.children, b.children)))
    return _zss(a, b)


@lru_cache(maxsize=20_000)
def _zss(a: LabelTree, b: LabelTree) -> float:
    return float(zss.simple_distance(a, b))


def tree_edit_distance(a: exp.Expr | LabelTree, b: exp.Expr | LabelTree) -> float:
    ta = a if isinstance(a, LabelTree) else to_tree(a)
    tb = b if isinstance(b, LabelTree) else to_tree(b)
    return _ted(ta, tb)


def normalised_ted(a: exp.Expr | LabelTree, b: exp.Expr | LabelTree) -> float:
    """TED divided by the larger tree's size: 0 for equal trees, at most 1."""
    ta = a if isinstance(a, LabelTree) else to_tree(a)
    tb = b if isinstance(b, LabelTree) else to_tree(b)
    return min(1.0, _ted(ta, tb) / max(ta.size, tb.size, 1))
