"""write_checks (LLM): what a right answer must satisfy, written from the request before any candidate exists.

One call (prompt ``write_checks.md``) reads the request, the faulty SQL (for the tables it names, not
for its logic) and the schema, and writes typed checks: the output columns, row-count relations,
uniqueness, ordering, the request's own example (rows to put into a disposable copy of the database
and the output they must give), edge cases the request names (NULLs, ties, empty groups, boundary
dates), and the state of tables after DDL/DML. It also writes probe rows, extra data that exercises
the predicates and joins: sample databases hold about three rows per table, so "it runs and returns
something plausible" says nothing there. The checks never see a candidate, so they cannot be bent to
fit one; ``verify`` runs them.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from actsagent.tools._context import ToolContext
from actsagent.tools._scenarios import MAX_SETUP_ROWS, Scalar, TableRows
from actsagent.tools._sqltext import statements_text

ColumnType = Literal["number", "text", "datetime", "boolean", "array", "json", "any"]

MAX_CHECKS = 10
MAX_EXPECTED_ROWS = 100


class ExpectedRows(BaseModel):
    """An output as the request shows it: rows matched by column position, headers for the reader."""

    columns: list[str] = Field(default_factory=list)
    rows: list[list[Scalar]] = Field(default_factory=list)
    ordered: bool = Field(default=False, description="the request fixes the row order")
    match: Literal["exact", "contains"] = Field(
        default="exact", description="exact: these are all the rows; contains: among them"
    )


class ExpectedColumn(BaseModel):
    name: str = ""
    role: str = Field(default="", description="what the column holds")
    type: ColumnType = "any"


class ColumnsCheck(BaseModel):
    kind: Literal["columns"] = "columns"
    id: str = ""
    why: str = Field(default="", description="the words of the request this check comes from")
    columns: list[ExpectedColumn] = Field(min_length=1)


class RowCountCheck(BaseModel):
    kind: Literal["row_count"] = "row_count"
    id: str = ""
    why: str = ""
    relation: Literal["exactly", "at_most", "at_least"] = "exactly"
    count: int | None = Field(default=None, ge=0, description="a fixed number (1 for 'the single ...')")
    count_query: str | None = Field(
        default=None,
        description="a read query whose one value is the number, for "
        "'one row per X': SELECT count(DISTINCT x) FROM ...",
    )

    @model_validator(mode="after")
    def _one_source(self) -> RowCountCheck:
        if self.count is None and not self.count_query:
            raise ValueError("give count or count_query")
        if self.count is not None:
            self.count_query = None
        return self


class UniqueCheck(BaseModel):
    kind: Literal["unique"] = "unique"
    id: str = ""
    why: str = ""
    positions: list[int] = Field(
        default_factory=list, description="1-based output columns unique together; empty: no two rows are equal"
    )


class OrderingCheck(BaseModel):
    kind: Literal["ordering"] = "ordering"
    id: str = ""
    why: str = ""
    position: int = Field(ge=1, description="1-based output column the rows are sorted by")
    descending: bool = False


class ScenarioCheck(BaseModel):
    """Data in a disposable copy, then the SQL's output (or a read query after it) must equal ``expected``.

    ``example``: the request's own sample rows and desired output. ``edge``: a case the request names
    (NULLs, ties, empty groups, boundary dates). ``state``: a read query after DDL/DML.
    """

    kind: Literal["example", "edge", "state"]
    id: str = ""
    why: str = ""
    setup: list[TableRows] = Field(default_factory=list)
    query: str | None = Field(
        default=None, description="read query run after the SQL; omit to check the SQL's own output"
    )
    expected: ExpectedRows


WrittenCheck = Annotated[
    ColumnsCheck | RowCountCheck | UniqueCheck | OrderingCheck | ScenarioCheck, Field(discriminator="kind")
]


class SameResultCheck(BaseModel):
    """Derived for speed issues whose original is right: the rewrite must give the original's results."""

    kind: Literal["same_result"] = "same_result"
    id: str = "same"
    why: str = "the request is about speed: the results must not change"


class FasterCheck(BaseModel):
    """Derived for speed issues: the estimated plan cost (EXPLAIN, no ANALYZE) must drop below the original's."""

    kind: Literal["faster"] = "faster"
    id: str = "plan"
    why: str = "the request is about speed"


Check = ColumnsCheck | RowCountCheck | UniqueCheck | OrderingCheck | ScenarioCheck | SameResultCheck | FasterCheck
CheckKind = Literal["columns", "row_count", "unique", "ordering", "example", "edge", "state", "same_result", "faster"]
# what may confirm a candidate: the user's own example, the state the request asks for, speed. An edge case's rows
# and expected output are the check writer's construction from its own reading of the request: passing one the
# original fails shows the candidate follows that reading, as the judge's approval does (on two measured draws of
# BIRD-CRITIC flash, candidates confirmed by an edge case alone were right 15 times in 20, the others 31 in 34)
CONFIRMING_KINDS = ("example", "state", "same_result", "faster")


class CheckPlan(BaseModel):
    """The model's reply: checks plus probe rows. Ids are assigned here (c1, c2, ...)."""

    about_speed: bool = Field(default=False, description="the request is about making the SQL faster")
    same_result_as_original: bool = Field(
        default=False, description="the request says the original's results are right (only speed or form must change)"
    )
    checks: list[WrittenCheck] = Field(default_factory=list)
    probe_rows: list[TableRows] = Field(
        default_factory=list, description="extra rows that exercise the predicates and joins"
    )

    @field_validator("checks")
    @classmethod
    def _cap(cls, v: list) -> list:
        return v[:MAX_CHECKS]

    @model_validator(mode="after")
    def _ids(self) -> CheckPlan:
        for i, c in enumerate(self.checks, 1):
            c.id = f"c{i}"
        return self

    def all_checks(self) -> list[Check]:
        """The written checks plus the derived speed checks."""
        out: list[Check] = list(self.checks)
        if self.about_speed:
            out.append(FasterCheck())
            if self.same_result_as_original:
                out.append(SameResultCheck())
        return out

    def summary(self) -> str:
        if not self.checks and not self.about_speed:
            return "no checks could be written from the request"
        parts = [describe(c) for c in self.all_checks()]
        if self.probe_rows:
            parts.append(
                f"probe data: {sum(len(t.rows) for t in self.probe_rows)} row(s) in "
                f"{', '.join(dict.fromkeys(t.table for t in self.probe_rows))}"
            )
        return "; ".join(parts)


def describe(c: Check) -> str:
    """One short line naming a check (for the tree, prompts and events)."""
    if isinstance(c, ColumnsCheck):
        cols = ", ".join(x.name or x.role or "?" for x in c.columns)
        return f"{c.id} columns: {len(c.columns)} ({cols})"
    if isinstance(c, RowCountCheck):
        what = str(c.count) if c.count is not None else f"the value of {c.count_query}"
        return f"{c.id} row count {c.relation.replace('_', ' ')} {what}"
    if isinstance(c, UniqueCheck):
        return f"{c.id} unique " + (f"columns {c.positions}" if c.positions else "rows")
    if isinstance(c, OrderingCheck):
        return f"{c.id} ordered by column {c.position}{' descending' if c.descending else ''}"
    if isinstance(c, ScenarioCheck):
        n = sum(len(t.rows) for t in c.setup)
        data = f" on {n} inserted row(s)" if n else ""
        return f"{c.id} {c.kind}{data}: {len(c.expected.rows)} expected row(s)" + (f" ({c.why[:80]})" if c.why else "")
    if isinstance(c, SameResultCheck):
        return f"{c.id}: same results as the original"
    return f"{c.id}: cheaper plan than the original (EXPLAIN)"


class WriteChecksInput(BaseModel):
    intent: str
    original_sql: str | list[str] | None = None


_SPEED = re.compile(
    r"\b(slow|slower|slowly|speed\s*up|faster|performance|performant|optimi[sz]\w*|efficien\w*|"
    r"execution plan|query plan|index(es)? (is|are) not used|takes? (too )?long|seq(uential)? scan)\b",
    re.IGNORECASE,
)


def mentions_speed(intent: str) -> bool:
    """The request's own words ask for speed (a backstop for the model's ``about_speed``)."""
    return bool(_SPEED.search(intent))


def write_checks(inp: WriteChecksInput, ctx: ToolContext) -> CheckPlan:
    """One LLM call; ``StructuredOutputError`` propagates (the graph records it and runs without checks)."""
    resp = ctx.complete(
        "write_checks",
        role="judge",
        response_model=CheckPlan,
        intent=inp.intent,
        original_sql=statements_text(inp.original_sql),
        **ctx.schema_vars(sql=inp.original_sql, intent=inp.intent),
        max_checks=MAX_CHECKS,
        max_rows=MAX_SETUP_ROWS,
    )
    plan: CheckPlan = resp.parsed
    if not plan.about_speed and mentions_speed(inp.intent):
        plan = plan.model_copy(update={"about_speed": True})
    return plan
