"""Typed shapes the copilot's API sends and receives; the page renders only these."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, Field

from actsagent.graphs.models import EventType
from actsagent.graphs.tree import PlanTree

TurnKind = Literal["ask", "repair", "run"]
TurnStatus = Literal["running", "awaiting_clarification", "done", "failed", "interrupted"]
# A step of a turn is one of the agent's events (``graphs.models.AgentEvent``, relayed by ``flow``) or one
# of the copilot's own: "start" (a turn or a resumed segment begins), "reply" (the analyst's answer to a
# clarification), "result" (rows to show), "answer" (words and chart), "done".
StepType = Literal[EventType, "start", "reply", "result", "answer", "done"]


class ResultView(BaseModel):
    """Rows as the page shows them: a bounded preview (``results.preview``) of JSON-safe values.

    ``row_count`` counts every row the query returned, ``rows`` holds the ones kept, ``truncated`` says
    rows were left out (by the preview or the database's row cap), ``more_rows`` that the query has more
    rows than the database fetched, and ``note`` says what was cut, in words.
    """

    columns: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    elapsed_ms: float | None = None
    more_rows: bool = False
    note: str | None = None


class ChartSpec(BaseModel):
    """A chart the page can draw from ``ResultView`` rows: x labels against one numeric column."""

    kind: Literal["bar", "line"]
    x: int  # column index of the labels
    y: list[int]  # column indexes of the numeric series
    title: str = ""


class Answer(BaseModel):
    text: str
    chart: ChartSpec | None = None
    by: Literal["llm", "rule"] = "rule"


class WebEvent(BaseModel):
    """One step of a turn, persisted and streamed (SSE ``data:`` is this model as JSON)."""

    turn_id: str
    seq: int
    type: StepType
    node_id: str | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    tree: PlanTree | None = None  # the agent's own tree, on the steps that changed it
    ts: float = Field(default_factory=time.time)


class Turn(BaseModel):
    id: str
    conversation_id: str
    index: int
    kind: TurnKind
    question: str = ""
    sql: str | None = None  # the analyst's SQL (run or repair)
    status: TurnStatus = "running"
    thread_id: str | None = None
    final_sql: str | None = None
    answer: str | None = None
    created_at: float = Field(default_factory=time.time)
    events: list[WebEvent] = Field(default_factory=list)


class ConversationSummary(BaseModel):
    id: str
    title: str
    database: str = ""
    created_at: float
    updated_at: float
    turns: int = 0


class Conversation(ConversationSummary):
    turn_list: list[Turn] = Field(default_factory=list)


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=20_000)


class SqlRequest(BaseModel):
    sql: str = Field(min_length=1, max_length=100_000)
    action: Literal["run", "repair"] = "run"
    question: str | None = Field(default=None, max_length=20_000)


class ClarifyRequest(BaseModel):
    answer: str = Field(min_length=1, max_length=5_000)


class NewConversation(BaseModel):
    title: str | None = Field(default=None, max_length=200)


class Status(BaseModel):
    """What the page's header shows: which database, whether an LLM is there, whether a token is needed."""

    database: str
    dialect: str | None = None
    database_ok: bool
    database_error: str | None = None
    llm: bool
    llm_note: str
    read_only: bool = True
    version: str
