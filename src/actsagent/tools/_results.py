"""Compact, serialisable views of executions: what tools hand to the planner and store on nodes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from actsagent.db import DbError, QueryResult

SMALL_RESULT = 10  # results up to this many rows are shown whole
PREVIEW_ROWS = 5  # rows shown of a larger result


class ToolOutput(BaseModel):
    """What a tool returns. The graph reads an output only through these methods (each tool's output
    overrides the ones that apply to it), never by its fields' names."""

    def summary(self) -> str:
        return ""

    def produced_sql(self) -> str | list[str] | None:
        """The SQL this output puts on the path for the steps after it (a candidate, a repair, a refinement)."""
        return None

    def executable_sql(self) -> str | list[str] | None:
        """SQL this output showed to execute (without a model, the leaf takes the newest on its path)."""
        return None

    def executed(self) -> list[ExecSummary]:
        """The statements this output ran, in order (a statement list's failing statement is found here)."""
        return []


class ExecSummary(BaseModel):
    """One statement's outcome: rows (capped) or the typed error."""

    sql: str
    ok: bool
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False  # ``rows`` holds fewer rows than the result has
    capped: bool = False  # the engine's row cap cut the result: row_count is a lower bound
    status: str = ""
    error: DbError | None = None
    elapsed_ms: float = 0.0

    @classmethod
    def of(cls, res: QueryResult | DbError, max_rows: int = 20) -> ExecSummary:
        if res.ok:
            assert isinstance(res, QueryResult)
            rows = [[_jsonable(v) for v in r] for r in res.rows[:max_rows]]
            return cls(
                sql=res.sql,
                ok=True,
                columns=[c.name for c in res.columns],
                rows=rows,
                row_count=res.row_count,
                truncated=res.truncated or res.row_count > max_rows,
                capped=res.truncated,
                status=res.status,
                elapsed_ms=res.elapsed_ms,
            )
        assert isinstance(res, DbError)
        return cls(sql=res.sql, ok=False, error=res, elapsed_ms=res.elapsed_ms)

    @property
    def empty(self) -> bool:
        return self.ok and self.row_count == 0 and bool(self.columns)

    @property
    def vacuous(self) -> bool:
        """One row of only NULLs and zeros: what aggregates over an empty row set return (COUNT 0, SUM NULL),
        as much a sign of a filter matching nothing as an empty result."""
        return self.ok and self.row_count == 1 and bool(self.rows) and all(v is None or v == 0 for v in self.rows[0])

    def describe(self, rows: int | None = None) -> str:
        """A few lines for a prompt: the error, or the columns and rows, saying how many are shown.

        ``rows=None``: a small result (up to ``SMALL_RESULT`` rows) is shown whole, a larger one
        by its first ``PREVIEW_ROWS`` rows; a reader must never take a preview for the result.
        """
        if not self.ok:
            assert self.error is not None
            return "ERROR " + self.error.describe()
        if not self.columns:
            return f"OK ({self.status or 'no rows returned'})"
        if rows is None:
            rows = SMALL_RESULT if self.row_count <= SMALL_RESULT and not self.capped else PREVIEW_ROWS
        body = [" | ".join("NULL" if v is None else str(v) for v in r) for r in self.rows[:rows]]
        total = (
            f"{self.row_count}+ rows (cut at the row cap)"
            if self.capped
            else f"{self.row_count} row{'' if self.row_count == 1 else 's'}"
        )
        if self.row_count == 0:
            shown = ""
        elif len(body) >= self.row_count and not self.capped:
            shown = ", all shown"
        else:
            shown = f", first {len(body)} shown"
        head = f"{total}{shown}; columns: {', '.join(self.columns)}"
        return "\n".join([head, *body])


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)
