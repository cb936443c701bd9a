"""The one place the copilot calls the agent: everything agent-shaped is translated here.

The server and the terminal chat only see ``BridgeEvent`` and ``FinalView``; when the agent's
API moves, this module moves with it and nothing else does. The agent's typed models (its events,
its plan nodes, the finished ``AgentRun``) are read as such, not guessed at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from actsagent.db.base import Database
from actsagent.db.results import DbError, QueryResult
from actsagent.graphs.models import AgentEvent, AgentRun, Clarification
from actsagent.graphs.tree import NodeStatus as AgentStatus
from actsagent.graphs.tree import PlanNode as AgentNode
from actsagent.tools.judge import Verdict
from actsagent.web.models import EventType, NodeStatus, PlanNode, ResultView
from actsagent.web.results import jsonable, view_of

# every status the agent gives a plan node, as the page shows it (the page's "running" comes from node_start);
# an unconfirmed candidate (approved by the judge alone, not chosen) is drawn as done, like a verified one not chosen
PAGE_STATUS: dict[AgentStatus, NodeStatus] = {
    "pending": "pending",
    "done": "done",
    "failed": "failed",
    "refuted": "abandoned",
    "skipped": "abandoned",
    "unconfirmed": "done",
    "accepted": "chosen",
}


class FinalView(BaseModel):
    """What an answer shows: the SQL that produced the rows, the rows, and how sure the agent is."""

    final_sql: str | None = None
    result: ResultView | None = None
    verdict: str | None = None
    verdict_ok: bool | None = None
    best_effort: bool = False  # a budget ended the run: the best candidate so far, not a verified one
    error: str | None = None
    status: str = ""  # solved, best_effort, failed or paused
    notes: list[str] = Field(default_factory=list)
    pending: Clarification | None = None  # the clarification a paused run waits for
    llm_calls: int = 0
    tokens: int = 0


class BridgeEvent(BaseModel):
    """One agent event for the copilot: ``data`` is JSON-safe; the agent's whole tree travels apart, in
    ``tree`` (the "plan" event: the planner's nodes; the "final" event: the run's tree, and ``final``)."""

    type: EventType
    node_id: str | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    tree: list[PlanNode] | None = None
    cursor: str | None = None
    final: FinalView | None = None


def to_bridge_event(ev: AgentEvent) -> BridgeEvent:
    data = dict(ev.data)
    out = BridgeEvent(type=ev.type, node_id=ev.node_id, message=ev.message)
    if ev.type == "plan":  # the planner's flat view of its nodes (``PlanTree.for_planner``): "result" is the summary
        out.tree = [
            page_node(AgentNode.model_validate({**n, "summary": n.get("result") or ""})) for n in data.pop("tree")
        ]
    elif ev.type == "final":
        run = AgentRun.model_validate(data.pop("run"))
        out.tree = [page_node(n) for n in run.tree.nodes.values()]
        out.cursor, out.final = run.tree.cursor, final_view(run)
    out.data = jsonable(data)
    return out


def page_node(n: AgentNode) -> PlanNode:
    """One node of the agent's plan as the page draws it: why a branch was abandoned (the judge's reasons,
    or the reading not chosen), what a node found or why it failed, the SQL it produced."""
    if n.status == "refuted" and n.verdict:
        detail = "; ".join(str(r) for r in n.verdict.reasons[:3])
    else:
        detail = (n.error or n.summary).strip()
    if not detail and n.status == "skipped":
        detail = "you chose another reading"
    sql = n.output.produced_sql() if n.output is not None else None
    return PlanNode(
        id=n.id,
        parent=n.parent,
        label=n.description.strip() or n.id,
        tool=n.tool,
        status=PAGE_STATUS[n.status],
        detail=detail[:600] or None,
        sql=sql if isinstance(sql, str) and sql.strip() else None,
        children=list(n.children),
    )


class AgentBridge:
    """Streams a run of the agent (tree mode, interactive so ambiguities come back as questions)."""

    def __init__(self, model: Any = None, *, mode: str = "tree") -> None:
        self.model = model
        self.mode = mode

    @property
    def has_llm(self) -> bool:
        """Whether the agent will have a model: the given one, else whatever the environment configures
        (the agent falls back to ``get_chat_model()``), so the page never claims less than is true."""
        if self.model is not None:
            return True
        from actsagent.llm import llm_available

        return llm_available()

    def ask(self, intent: str, db: Database, *, thread_id: str) -> Iterator[BridgeEvent]:
        """Text-to-SQL: the agent writes SQL for ``intent``, then debugs it with the tree."""
        return self._stream(intent, None, db, thread_id)

    def repair(self, intent: str, sql: str, db: Database, *, thread_id: str) -> Iterator[BridgeEvent]:
        """The agent repairs the analyst's ``sql`` so it does what ``intent`` asks."""
        return self._stream(intent, sql, db, thread_id)

    def _stream(self, intent: str, sql: str | None, db: Database, thread_id: str) -> Iterator[BridgeEvent]:
        from actsagent.agent import stream

        for ev in stream(
            intent, sql, db, ask=sql is None, mode=self.mode, model=self.model, interactive=True, thread_id=thread_id
        ):
            yield to_bridge_event(ev)

    def resume(self, thread_id: str, answer: str, db: Database) -> Iterator[BridgeEvent]:
        """Continue a run paused on a clarification; its steps stream like a fresh run's."""
        from actsagent.agent import stream_resume

        for ev in stream_resume(thread_id, answer, db, model=self.model):
            yield to_bridge_event(ev)


def final_view(run: AgentRun) -> FinalView:
    verdict = run.verdict
    return FinalView(
        final_sql=run.final_sql,
        result=view_of(run.result) if isinstance(run.result, QueryResult) else None,
        error=run.result.message if isinstance(run.result, DbError) else None,
        verdict=_verdict_text(verdict) if verdict else None,
        verdict_ok=verdict.passed if verdict else None,
        best_effort=run.status == "best_effort",
        status=run.status,
        notes=list(run.notes),
        pending=run.pending_clarification,
        llm_calls=run.usage.llm_calls,
        tokens=run.usage.prompt_tokens + run.usage.completion_tokens,
    )


def _verdict_text(v: Verdict) -> str:
    head = "checked: passes" if v.passed else "checked: does not pass"
    if v.method == "execution_only":
        head += " (execution only, no LLM judge)"
    scores = [
        f"{name} {score:.1f}"
        for name, score in (("semantic", v.semantic_score), ("entailment", v.entailment_score))
        if score is not None
    ]
    if scores:
        head += " · " + ", ".join(scores)
    if v.reasons:
        head += " · " + "; ".join(v.reasons[:3])
    return head
