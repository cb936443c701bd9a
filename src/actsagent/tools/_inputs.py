"""How each tool's input is completed from the run: the planner writes partial inputs, the path knows the rest.

``PathContext`` is what the graph knows at a node (the request, the original SQL, the SQL and evidence
its path produced); each tool's ``fill`` takes the planner's input and returns the complete one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from actsagent.tools._context import ToolInputError

Sql = str | list[str] | None


@dataclass(frozen=True)
class PathContext:
    intent: str
    original_sql: Sql
    working_sql: Sql  # the newest SQL produced on the path, else the original
    failing_statement: Callable[[Sql], Sql]  # of a statement list: the one that failed on the path
    newest_executable: Sql = None  # the newest SQL on the path known to execute
    has_model: bool = True
    hypothesis: str = ""  # the readings the path is under
    evidence: list[str] = field(default_factory=list)  # one line per executed node on the path
    feedback: str = ""  # why earlier candidates were refuted


def _needs_sql(tool: str, given: dict[str, Any]) -> dict[str, Any]:
    if given.get("sql") is None:
        raise ToolInputError(f"{tool} needs SQL and there is none yet on this path")
    return given


def fill_run_sql(given: dict[str, Any], ctx: PathContext) -> dict[str, Any]:
    return _needs_sql("run_sql", {**given, "sql": given.get("sql") or ctx.working_sql})


def fill_as_given(given: dict[str, Any], ctx: PathContext) -> dict[str, Any]:
    return dict(given)


def fill_split_and_fix(given: dict[str, Any], ctx: PathContext) -> dict[str, Any]:
    """A statement list goes whole: a statement may fail only after others ran."""
    return _needs_sql("split_and_fix", {"intent": ctx.intent, **given, "sql": given.get("sql") or ctx.working_sql})


def fill_safeql_refine(given: dict[str, Any], ctx: PathContext) -> dict[str, Any]:
    """SafeQL refines one query: the statement that failed."""
    return _needs_sql("safeql_refine", {**given, "sql": ctx.failing_statement(given.get("sql") or ctx.working_sql)})


def fill_detect_ambiguities(given: dict[str, Any], ctx: PathContext) -> dict[str, Any]:
    return {**given, "intent": given.get("intent") or ctx.intent, "sql": given.get("sql") or ctx.original_sql}


def fill_generate_sql(given: dict[str, Any], ctx: PathContext) -> dict[str, Any]:
    """The candidate is written from the request, the path's evidence and the planner's draft or hint."""
    draft = given.get("sql") or given.get("draft_sql")
    if draft is None and not ctx.has_model:
        draft = ctx.newest_executable
    hint = str(given.get("instructions") or given.get("hint") or "")
    return {
        "intent": ctx.intent,
        "original_sql": ctx.original_sql,
        "hypothesis": "; ".join(x for x in (ctx.hypothesis, hint) if x),
        "evidence": ctx.evidence,
        "draft_sql": draft,
        "feedback": ctx.feedback,
        "strategy": given.get("strategy") or "minimal_edit",
        "use_llm": given.get("use_llm") is not False,  # False: the draft is the candidate, as written
    }
