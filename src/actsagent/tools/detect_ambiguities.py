"""detect_ambiguities (LLM): phrases of the intent that admit several schema-grounded readings.

Each ambiguity carries 2-3 interpretations; the graph turns every interpretation into a child
branch of the plan, so a wrong early reading can be abandoned instead of built upon.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from actsagent.tools._context import ToolContext
from actsagent.tools._results import ToolOutput
from actsagent.tools._sqltext import statements_text


class DetectAmbiguitiesInput(BaseModel):
    intent: str
    sql: str | list[str] | None = None
    max_ambiguities: int = Field(default=3, gt=0, le=6)


class Interpretation(BaseModel):
    description: str = Field(description="one concrete reading, in terms of tables/columns/values")
    sql_hint: str = Field(default="", description="how the SQL would express this reading")


class Ambiguity(BaseModel):
    phrase: str
    interpretations: list[Interpretation] = Field(min_length=1, max_length=4)
    settle_with_data: bool = Field(default=True, description="can inspecting data decide between readings?")
    question: str = Field(default="", description="question to ask the user if the data cannot decide")


class AmbiguityReport(BaseModel):
    ambiguities: list[Ambiguity] = Field(default_factory=list)


class DetectAmbiguitiesOutput(AmbiguityReport, ToolOutput):
    tool: Literal["detect_ambiguities"] = "detect_ambiguities"

    def summary(self) -> str:
        if not self.ambiguities:
            return "no ambiguity found"
        lines = []
        for a in self.ambiguities:
            lines.append(
                f"{a.phrase!r}: " + " | ".join(f"({i + 1}) {x.description}" for i, x in enumerate(a.interpretations))
            )
        return "\n".join(lines)


def detect_ambiguities(inp: DetectAmbiguitiesInput, ctx: ToolContext) -> DetectAmbiguitiesOutput:
    sql = statements_text(inp.sql)
    resp = ctx.complete(
        "detect_ambiguities",
        role="tools",
        response_model=AmbiguityReport,
        intent=inp.intent,
        sql=sql or "",
        **ctx.schema_vars(sql=inp.sql, intent=inp.intent),
        max_ambiguities=inp.max_ambiguities,
    )
    report: AmbiguityReport = resp.parsed
    return DetectAmbiguitiesOutput(ambiguities=report.ambiguities[: inp.max_ambiguities])
