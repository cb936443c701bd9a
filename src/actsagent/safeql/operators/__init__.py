"""Refinement operators, one module each. The search loop only iterates ``OPERATORS``."""

from actsagent.safeql.operators import (
    aggregate,
    ambiguous,
    attribute,
    function,
    join,
    mismatch,
    relation,
    syntax,
    value,
)
from actsagent.safeql.operators.base import Operator

OPERATORS: tuple[Operator, ...] = (syntax, relation, join, attribute, value, function, ambiguous, mismatch, aggregate)

__all__ = ["OPERATORS"]
