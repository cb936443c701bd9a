"""The one place the copilot calls the agent: everything agent-shaped is translated here.

The server and the terminal chat only see ``BridgeEvent`` and ``FinalView``; when the agent's
API moves, this module moves with it and nothing else does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from actsagent.db.base import Database
from actsagent.web.models import ResultView
from actsagent.web.results import jsonable, view_from_dump


class BridgeEvent(BaseModel):
    type: str
    node_id: str | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


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
    pending: dict[str, Any] | None = None  # the clarification a paused run waits for
    llm_calls: int = 0
    tokens: int = 0


def _dump(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return obj


def to_bridge_event(ev: Any) -> BridgeEvent:
    data = _dump(getattr(ev, "data", None)) or {}
    if not isinstance(data, dict):
        data = {"value": data}
    etype = getattr(ev, "type", None) or "note"
    etype = getattr(etype, "value", etype)
    node = getattr(ev, "node_id", None)
    return BridgeEvent(type=str(etype), node_id=None if node is None else str(node),
                       message=str(getattr(ev, "message", "") or ""), data=jsonable(data))


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

    def ask(self, intent: str, db: Database, *, thread_id: str, sql: str | None = None) -> Iterator[BridgeEvent]:
        """Text-to-SQL when ``sql`` is None, else repair of the analyst's SQL; both debug with the tree."""
        from actsagent.agent import stream

        for ev in stream(intent, sql, db, ask=sql is None, mode=self.mode, model=self.model, interactive=True,
                         thread_id=thread_id):
            yield to_bridge_event(ev)

    def resume(self, thread_id: str, answer: str, db: Database) -> Iterator[BridgeEvent]:
        """Continue a run paused on a clarification; its steps stream like a fresh run's."""
        from actsagent.agent import stream_resume

        for ev in stream_resume(thread_id, answer, db, model=self.model):
            yield to_bridge_event(ev)


def final_view(data: dict[str, Any]) -> FinalView:
    """Read the AgentRun dump carried by the "final" event."""
    run = data.get("run") if isinstance(data.get("run"), dict) else data
    sql = run.get("final_sql")
    result = None
    raw = run.get("result")
    if isinstance(raw, dict) and raw.get("ok", True) is not False:
        result = view_from_dump(raw)
    verdict = run.get("verdict")
    verdict_ok: bool | None = None
    verdict_text: str | None = None
    if isinstance(verdict, dict):
        ok = verdict.get("passed", verdict.get("ok"))
        verdict_ok = ok if isinstance(ok, bool) else None
        verdict_text = _verdict_text(verdict, verdict_ok)
    status = str(run.get("status") or "")
    error = None
    if isinstance(raw, dict) and raw.get("ok") is False:
        error = raw.get("message")
    pending = run.get("pending_clarification") if isinstance(run.get("pending_clarification"), dict) else None
    usage = run.get("usage") if isinstance(run.get("usage"), dict) else {}
    return FinalView(final_sql=sql if isinstance(sql, str) else None, result=result, verdict=verdict_text,
                     llm_calls=int(usage.get("llm_calls") or 0),
                     tokens=int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0),
                     verdict_ok=verdict_ok, best_effort=status == "best_effort", status=status,
                     error=str(error) if error else None, notes=[str(n) for n in run.get("notes") or []],
                     pending=pending)


def _verdict_text(v: dict[str, Any], ok: bool | None) -> str:
    head = "checked: passes" if ok else "checked: does not pass" if ok is False else "checked"
    method = v.get("method")
    if method == "execution_only":
        head += " (execution only, no LLM judge)"
    scores = [f"{k.split('_')[0]} {v[k]:.1f}" for k in ("semantic_score", "entailment_score")
              if isinstance(v.get(k), (int, float))]
    if scores:
        head += " · " + ", ".join(scores)
    reasons = v.get("reasons")
    if isinstance(reasons, list) and reasons:
        head += " · " + "; ".join(str(r) for r in reasons[:3])
    return head
