"""The agent's tools: typed functions ``tool(input_model, ctx) -> output_model``, usable on their own.

``TOOLS`` lists them as data (the sqlglot optimizer's RULES shape): the graph knows tools only
through this table: how a tool's input is completed from the path (``ToolSpec.resolve``) and, through its
typed output (``ToolOutputs``, a union discriminated by ``tool``), what SQL its output produces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from actsagent.tools._context import NoModelError, SchemaSource, ToolContext, ToolInputError, UsageMeter
from actsagent.tools._inputs import (
    PathContext,
    fill_as_given,
    fill_detect_ambiguities,
    fill_generate_sql,
    fill_run_sql,
    fill_safeql_refine,
    fill_split_and_fix,
)
from actsagent.tools._results import ExecSummary, ToolOutput
from actsagent.tools.detect_ambiguities import (
    Ambiguity,
    DetectAmbiguitiesInput,
    DetectAmbiguitiesOutput,
    Interpretation,
    detect_ambiguities,
)
from actsagent.tools.generate_sql import GenerateSqlInput, GenerateSqlOutput, generate_sql
from actsagent.tools.inspect_columns import ColumnProfile, InspectColumnsInput, InspectColumnsOutput, inspect_columns
from actsagent.tools.judge import JudgeInput, JudgeScores, Verdict, judge
from actsagent.tools.run_sql import RunSqlInput, RunSqlOutput, run_sql
from actsagent.tools.safeql_refine import SafeqlRefineInput, SafeqlRefineOutput, safeql_refine
from actsagent.tools.split_and_fix import Localisation, SplitAndFixInput, SplitAndFixOutput, localise, split_and_fix

# a node's output, typed by the tool that produced it (read back from a checkpoint by its ``tool`` tag)
ToolOutputs = Annotated[
    RunSqlOutput
    | InspectColumnsOutput
    | DetectAmbiguitiesOutput
    | SplitAndFixOutput
    | SafeqlRefineOutput
    | GenerateSqlOutput,
    Field(discriminator="tool"),
]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[[Any, ToolContext], ToolOutputs]
    input_model: type[BaseModel]
    purpose: str
    planner_input: dict[str, str]  # the fields a planner sets; the rest come from context
    fill: Callable[[dict[str, Any], PathContext], dict[str, Any]]  # the planner's input, completed from the path

    def resolve(self, given: dict[str, Any], ctx: PathContext) -> BaseModel:
        """The tool's typed input: what the planner wrote, completed from the path (ValidationError if unfit)."""
        return self.input_model.model_validate(self.fill(dict(given), ctx))


TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec(
            "run_sql",
            run_sql,
            RunSqlInput,
            "execute SQL (a sub-query, a probe, a candidate) and see rows or the typed error",
            {"sql": "SQL to run (default: the newest SQL on the path)"},
            fill_run_sql,
        ),
        ToolSpec(
            "inspect_columns",
            inspect_columns,
            InspectColumnsInput,
            "sample/distinct values, null share, min/max and formats of table.column",
            {"table": "table name", "columns": "list of column names (default: all)"},
            fill_as_given,
        ),
        ToolSpec(
            "detect_ambiguities",
            detect_ambiguities,
            DetectAmbiguitiesInput,
            "find ambiguous phrases in the intent; each interpretation becomes a child branch",
            {},
            fill_detect_ambiguities,
        ),
        ToolSpec(
            "split_and_fix",
            split_and_fix,
            SplitAndFixInput,
            "split a failing query into clause-level sub-queries, localise the error, repair from that evidence",
            {"sql": "the failing SQL (default: the newest SQL on the path)"},
            fill_split_and_fix,
        ),
        ToolSpec(
            "safeql_refine",
            safeql_refine,
            SafeqlRefineInput,
            "LLM-free search over small AST edits until the query executes (unknown names, joins, values)",
            {"sql": "SQL to refine (default: the newest SQL on the path)"},
            fill_safeql_refine,
        ),
        ToolSpec(
            "generate_sql",
            generate_sql,
            GenerateSqlInput,
            "leaf: a candidate, by default a minimal edit of the original SQL grounded in the path's evidence; "
            "executed, run through the checks written from the request, and judged",
            {
                "instructions": "optional: what to change",
                "sql": "optional: a concrete draft to start from",
                "strategy": "optional: 'minimal_edit' (default) or 'rewrite' (written directly from the request, "
                "without the path's evidence)",
            },
            fill_generate_sql,
        ),
    )
}

__all__ = [
    "TOOLS",
    "Ambiguity",
    "ColumnProfile",
    "DetectAmbiguitiesInput",
    "DetectAmbiguitiesOutput",
    "ExecSummary",
    "GenerateSqlInput",
    "GenerateSqlOutput",
    "InspectColumnsInput",
    "InspectColumnsOutput",
    "Interpretation",
    "JudgeInput",
    "JudgeScores",
    "Localisation",
    "NoModelError",
    "PathContext",
    "RunSqlInput",
    "RunSqlOutput",
    "SafeqlRefineInput",
    "SafeqlRefineOutput",
    "SchemaSource",
    "SplitAndFixInput",
    "SplitAndFixOutput",
    "ToolContext",
    "ToolInputError",
    "ToolOutput",
    "ToolOutputs",
    "ToolSpec",
    "UsageMeter",
    "Verdict",
    "detect_ambiguities",
    "generate_sql",
    "inspect_columns",
    "judge",
    "localise",
    "run_sql",
    "safeql_refine",
    "split_and_fix",
]
