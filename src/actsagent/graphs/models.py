"""Typed boundaries of the graphs: budgets, events, the planner's reply and the finished run."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, Field

from actsagent.db import DbError, QueryResult
from actsagent.errors import UserError
from actsagent.graphs.tree import NodeSpec, PlanTree
from actsagent.tools._context import Usage
from actsagent.tools.checks import CheckPlan
from actsagent.tools.judge import Verdict
from actsagent.tools.verify import Verification, check_lines

Mode = Literal["tree", "linear", "regenerate", "single_shot"]


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as e:
        raise UserError(f"{name}={raw!r} is not a number of seconds") from e
    if not (0 < value < float("inf")):
        raise UserError(f"{name} must be a positive number of seconds, not {raw}")
    return value


class Budget(BaseModel):
    """Limits that end a run with the best candidate so far (marked ``best_effort``)."""

    max_nodes: int = Field(default=24, gt=0)
    max_llm_calls: int = Field(default=40, gt=0)
    max_tokens: int = Field(default=300_000, gt=0)
    # wall time includes waiting for the model: a slow endpoint (a person answering through a relay) needs more
    max_wall_s: float = Field(default_factory=lambda: _env_float("ACTSAGENT_MAX_WALL_S", 900.0), gt=0)
    max_regenerations: int = Field(default=3, ge=0)  # the regenerate variant's N
    planner_retries: int = Field(default=1, ge=0)  # re-asks after a malformed planner reply


class Addition(BaseModel):
    parent: str
    node: NodeSpec


class PlannerReply(BaseModel):
    """Every planner decision is an operation on the plan JSON (section 4.2)."""

    reason: str = ""
    plan: NodeSpec | None = Field(default=None, description="the initial plan (phase 'initial' only)")
    add: list[Addition] = Field(default_factory=list, description="new nodes under existing ones")
    cursor: str | None = Field(default=None, description="id of the pending node to execute next")
    stop: bool = Field(default=False, description="give up: no promising alternative remains")


EventType = Literal["plan", "node_start", "node_end", "candidate", "clarify", "final", "error", "note"]


class AgentEvent(BaseModel):
    type: EventType
    node_id: str | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


RunUsage = Usage  # a run's totals are the same record as a node's


class Clarification(BaseModel):
    question: str
    phrase: str = ""
    options: list[str] = Field(default_factory=list)
    node_id: str | None = None


RunStatus = Literal["solved", "best_effort", "failed", "paused"]


class AgentRun(BaseModel):
    status: RunStatus
    mode: Mode = "tree"
    intent: str = ""
    original_sql: str | list[str] | None = None
    final_sql: str | None = None
    final_sql_statements: list[str] = Field(default_factory=list)
    final_node: str | None = None
    result: QueryResult | DbError | None = Field(default=None, discriminator="ok")
    verdict: Verdict | None = None
    tree: PlanTree = Field(default_factory=PlanTree)
    usage: RunUsage = Field(default_factory=RunUsage)
    framework_ms: float = 0.0
    wall_ms: float = 0.0
    timings: dict[str, float] = Field(default_factory=dict)  # framework time outside nodes: probe_ms, checks_ms
    # (the original SQL through the checks, disposable copies included), final_ms
    notes: list[str] = Field(default_factory=list)
    model_failures: list[dict[str, Any]] = Field(default_factory=list)
    pending_clarification: Clarification | None = None
    thread_id: str | None = None
    checks: CheckPlan | None = None  # written from the request before any candidate
    original_checks: Verification | None = None  # the original SQL through those checks

    def render_text(self) -> str:
        lines = [f"status: {self.status} ({self.mode})", self.tree.render_text()]
        if self.checks is not None:
            lines += check_lines(self.checks, self.original_checks)
        if self.final_sql:
            lines.append(f"final SQL: {self.final_sql}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
