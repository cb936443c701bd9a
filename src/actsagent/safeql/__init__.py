"""SafeQL search-based refinement: the nearest query that runs, found without an LLM.

``refine(db, sql)`` locates the engine's error in the sqlglot AST, applies error-directed operators
(``operators.OPERATORS``), and explores candidates best-first by semantic distance.
"""

from actsagent.safeql.result import Edit, RefineOptions, RefineResult
from actsagent.safeql.search import aggregates_nothing, refine

__all__ = ["Edit", "RefineOptions", "RefineResult", "aggregates_nothing", "refine"]
