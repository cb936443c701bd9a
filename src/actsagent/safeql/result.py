"""Typed options and outcome of a refinement."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class RefineOptions(BaseModel, frozen=True):
    """Search settings; the defaults are the paper's (alpha 0.35, K 3) plus hard limits."""

    alpha: float = Field(default=0.35, ge=0.0, le=1.0)
    k: int = Field(default=3, ge=1)
    max_depth: int = Field(default=4, ge=1)
    max_expansions: int = Field(default=40, ge=1)
    max_candidates: int = Field(default=400, ge=1)
    time_limit_s: float = Field(default=5.0, gt=0)
    statement_timeout_s: float = Field(default=3.0, gt=0)
    # treat an empty result as a failure to refine (value refinement); so is an aggregate without GROUP BY
    # whose FROM/WHERE yields no row (its single row [0, NULL] says nothing matched)
    refine_empty: bool = True
    preview_rows: int = Field(default=10, ge=0)
    max_rows: int = Field(default=1000, ge=1)


class Edit(BaseModel, frozen=True):
    """One refinement step: which operator changed what, why, and how far it moved the query."""

    operator: str
    reason: str
    before: str
    after: str
    embed_distance: float = 0.0
    sql: str = ""  # the query after this step


class RefineResult(BaseModel):
    status: Literal["already_ok", "refined", "gave_up"]
    why: str = ""
    original_sql: str
    refined_sql: str | None = None
    # what was wrong with the original: "empty_result" for no rows, or for an aggregate over no rows
    error_class: str | None = None
    error_message: str | None = None
    edits: list[Edit] = Field(default_factory=list)
    distance: float = 0.0  # delta of the answer from the original
    ted: float = 0.0
    candidates_explored: int = 0  # candidates executed
    candidates_generated: int = 0
    pruned_by_type: int = 0
    pruned_by_topk: int = 0
    elapsed_ms: float = 0.0
    catalog_ms: float = 0.0  # index build/refresh time spent inside this call (0 once built)
    columns: list[str] = Field(default_factory=list)
    rows_preview: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    empty_result: bool = False  # the answer executes but returns no rows

    @property
    def ok(self) -> bool:
        return self.status != "gave_up"

    @property
    def sql(self) -> str:
        return self.refined_sql or self.original_sql
