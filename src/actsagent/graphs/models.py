"""Typed boundaries of the graphs: budgets, events, the planner's reply and the finished run."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from actsagent.db import DbError, QueryResult
from actsagent.errors import UserError
from actsagent.graphs.candidates import CandidateStatus
from actsagent.graphs.tree import NodeSpec, PlanNode, PlanTree
from actsagent.llm.usage import RunUsage
from actsagent.tools.checks import CheckPlan
from actsagent.tools.judge import Verdict
from actsagent.tools.verify import Verification, check_lines

# escalate: the tree, after the direct rewrite (the single-shot request) is judged and not approved
Mode = Literal["tree", "linear", "escalate", "regenerate", "single_shot"]
MODES: tuple[Mode, ...] = get_args(Mode)


def mode_of(text: str, allowed: tuple[Mode, ...] = MODES) -> Mode:
    """``text`` as a mode, or a ``UserError`` naming the ones ``allowed``."""
    for mode in allowed:
        if text == mode:
            return mode
    raise UserError(f"unknown mode {text!r}: use {', '.join(allowed)}")


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
    outvoted: str | None = None  # the judge's unconfirmed choice, replaced by agreeing candidates (see the notes)
    alternatives: list[str] = Field(default_factory=list)  # nodes of other readings that run and return other rows
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


class _Event(BaseModel):
    """What every event of a run says: which node (if any) and one line for people."""

    model_config = ConfigDict(extra="forbid")  # a key no consumer reads is a mistake at the emit call

    node_id: str | None = None
    message: str = ""


class _TreeEvent(_Event):
    """An event that changed the plan tree carries the tree as it then stood (a copy: the run goes on)."""

    tree: PlanTree

    @field_validator("tree")
    @classmethod
    def _snapshot(cls, tree: PlanTree) -> PlanTree:
        return tree.model_copy(deep=True)

    @property
    def node(self) -> PlanNode | None:
        return self.tree.nodes.get(self.node_id or "")


class PlanEvent(_TreeEvent):
    type: Literal["plan"] = "plan"
    text: str = ""  # the tree and the checks as text, for a terminal


class NodeEvent(_TreeEvent):
    """A node started (the tree's cursor is on it) or ended (its status, output and usage are on it)."""

    type: Literal["node_start", "node_end"]


class CandidateEvent(_Event):
    """The judge's word on a generate_sql node's SQL; ``passed`` None: neither accepted nor refuted (yet)."""

    type: Literal["candidate"] = "candidate"
    sql: str | list[str]
    status: CandidateStatus
    passed: bool | None = None
    execution: str = ""


class ClarifyEvent(_Event):
    type: Literal["clarify"] = "clarify"
    question: str
    phrase: str = ""
    options: list[str] = Field(default_factory=list)


class NoteEvent(_Event):
    """A line for people: what the planner decided, a resumed run (``note``), a provider that failed (``error``)."""

    type: Literal["note", "error"]


class FinalEvent(_Event):
    """The last event of a run: the whole run."""

    type: Literal["final"] = "final"
    run: AgentRun


AgentEvent = Annotated[
    PlanEvent | NodeEvent | CandidateEvent | ClarifyEvent | NoteEvent | FinalEvent,
    Field(discriminator="type"),
]
EventType = Literal["plan", "node_start", "node_end", "candidate", "clarify", "note", "error", "final"]
AGENT_EVENT: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


def agent_event(type_: EventType, message: str = "", node_id: str | None = None, **fields: Any) -> AgentEvent:
    """The typed event of kind ``type_``; a field that kind lacks raises (a key no consumer reads is a mistake)."""
    return AGENT_EVENT.validate_python({"type": type_, "node_id": node_id, "message": message, **fields})
