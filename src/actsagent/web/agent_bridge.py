"""The one place the copilot calls the agent: it streams the agent's own typed events
(``graphs.models.AgentEvent``, plan tree included) and words a finished ``AgentRun`` as a ``FinalView``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from actsagent.db.base import Database
from actsagent.db.results import DbError, QueryResult
from actsagent.graphs.models import AgentEvent, AgentRun, Clarification, Mode, RunStatus
from actsagent.tools.judge import Verdict
from actsagent.web.models import ResultView
from actsagent.web.results import view_of


class FinalView(BaseModel):
    """What an answer shows: the SQL that produced the rows, the rows, and how sure the agent is."""

    final_sql: str | None = None
    result: ResultView | None = None
    verdict: str | None = None
    verdict_ok: bool | None = None
    best_effort: bool = False  # a budget ended the run: the best candidate so far, not a verified one
    error: str | None = None
    status: RunStatus = "failed"
    notes: list[str] = Field(default_factory=list)
    pending: Clarification | None = None  # the clarification a paused run waits for
    llm_calls: int = 0
    tokens: int = 0


class AgentBridge:
    """Streams a run of the agent (tree mode, interactive so ambiguities come back as questions)."""

    def __init__(self, model: Any = None, *, mode: Mode = "tree", checkpointer: Any = None) -> None:
        self.model = model
        self.mode = mode
        self.checkpointer = checkpointer  # None: the agent's own (a local file); replicas share one in PostgreSQL

    @property
    def has_llm(self) -> bool:
        """Whether the agent will have a model: the given one, else whatever the environment configures
        (the agent falls back to ``get_chat_model()``), so the page never claims less than is true."""
        if self.model is not None:
            return True
        from actsagent.llm import llm_available

        return llm_available()

    def ask(self, intent: str, db: Database, *, thread_id: str) -> Iterator[AgentEvent]:
        """Text-to-SQL: the agent writes SQL for ``intent``, then debugs it with the tree."""
        return self._stream(intent, None, db, thread_id)

    def repair(self, intent: str, sql: str, db: Database, *, thread_id: str) -> Iterator[AgentEvent]:
        """The agent repairs the analyst's ``sql`` so it does what ``intent`` asks."""
        return self._stream(intent, sql, db, thread_id)

    def _stream(self, intent: str, sql: str | None, db: Database, thread_id: str) -> Iterator[AgentEvent]:
        from actsagent.agent import stream

        return stream(
            intent,
            sql,
            db,
            ask=sql is None,
            mode=self.mode,
            model=self.model,
            interactive=True,
            thread_id=thread_id,
            checkpointer=self.checkpointer,
        )

    def resume(self, thread_id: str, answer: str, db: Database) -> Iterator[AgentEvent]:
        """Continue a run paused on a clarification; its steps stream like a fresh run's."""
        from actsagent.agent import stream_resume

        return stream_resume(thread_id, answer, db, model=self.model, checkpointer=self.checkpointer)


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
