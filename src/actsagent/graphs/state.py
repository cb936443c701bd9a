"""The tree graph's checkpointed state as typed models (LangGraph takes a pydantic state schema).

Every field is a LangGraph channel; the checkpointer stores each value (a pydantic model, or a list of
them) and validates it back on resume. Live objects (database, model, event sink) are in ``Runtime``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from actsagent.graphs.candidates import Candidates
from actsagent.graphs.models import Clarification, Mode
from actsagent.graphs.tree import PlanTree
from actsagent.llm.usage import RunUsage
from actsagent.tools.checks import CheckPlan
from actsagent.tools.verify import Verification

FinalStatus = Literal["solved", "best_effort", "failed"]


class Counters(RunUsage):
    """A run's totals: its LLM usage (``add`` one step's), nodes, wall time, and framework timings outside nodes."""

    nodes: int = 0
    wall_ms: float = 0.0
    probe_ms: float = 0.0  # the original SQL's first run
    checks_ms: float = 0.0  # the original SQL through the checks

    def usage(self) -> RunUsage:
        return RunUsage.model_validate(self.model_dump(include=set(RunUsage.model_fields)))


class Failure(BaseModel):
    """A model failure (malformed reply, bad tool input, failing SQL, invalid decision), where it happened."""

    model_config = ConfigDict(populate_by_name=True)

    node: str | None = None
    tool: str | None = None
    phase: str | None = None
    kind: str
    schema_name: str | None = Field(default=None, alias="schema")
    model: str | None = None
    role: str | None = None
    errors: list[str] = Field(default_factory=list)
    raw_text: str | None = None

    def report(self) -> dict[str, Any]:
        """As the run reports it: the fields that were set."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class Decision(BaseModel):
    phase: str
    cursor: str | None = None
    reason: str = ""
    added: int = 0
    stop: bool = False


class Refuted(BaseModel):
    """A refuted candidate, as the planner and generate_sql see it."""

    node: str
    sql: str
    why: str


class Best(BaseModel):
    node: str
    ok: bool
    empty: bool = False


class Final(BaseModel):
    status: FinalStatus
    node: str | None = None
    reason: str
    outvoted: str | None = None  # the unconfirmed choice that agreeing candidates replaced (candidates.outvoting)
    alternatives: list[str] = Field(default_factory=list)  # other readings still standing (candidates.alternatives)


class TreeState(BaseModel):
    mode: Mode = "tree"
    intent: str = ""
    original_sql: str | list[str] | None = None
    first_draft: bool = False  # original_sql is ask's own first draft, not SQL reported faulty: judged before revised
    verify_first: bool = False  # the root is a candidate judged before any plan (tree_graph._verified_first)
    original_result: str = ""
    tree: PlanTree = Field(default_factory=PlanTree)
    best: Best | None = None
    final: Final | None = None
    counters: Counters = Field(default_factory=Counters)
    failures: list[Failure] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    pending: Clarification | None = None  # an interactive run waits for the answer to this
    refuted: list[Refuted] = Field(default_factory=list)
    checks: CheckPlan | None = None  # written from the request before any candidate
    original_check: Verification | None = None  # the original SQL through those checks
    candidates: Candidates = Field(default_factory=Candidates)
    accepted: str | None = None  # the node of a verified candidate: the run ends with it
    jump: str | None = None  # a verification sibling to run next without asking the planner

    def updates(self) -> dict[str, Any]:
        """Every field, as a LangGraph update (a step writes the whole state back)."""
        return {k: getattr(self, k) for k in type(self).model_fields}


def initial_state(
    intent: str, sql: str | list[str] | None, mode: Mode = "tree", *, first_draft: bool = False
) -> TreeState:
    return TreeState(mode=mode, intent=intent, original_sql=sql, first_draft=first_draft and bool(sql))
