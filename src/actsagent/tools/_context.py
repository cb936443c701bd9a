"""What every tool needs, injected rather than global: the database, the policy, the model, a meter.

Tools never open connections or read settings themselves; the graph (or a caller using a tool
on its own) builds one ``ToolContext`` and passes it in. LLM usage is metered here so the graph
can put each call's tokens and time on the plan node that caused it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from actsagent.db import Database
from actsagent.llm.usage import LLMResponse, RunUsage

if TYPE_CHECKING:
    from actsagent.guard import Policy
    from actsagent.kb import Retriever
    from actsagent.llm import ChatModel

log = logging.getLogger("actsagent.tools")


class SchemaSource(StrEnum):
    """Where a prompt's schema context (the ``_schema.md`` variables) comes from, set per run.

    ``auto``: the knowledge base when the schema is too large to show whole and a knowledge base
    exists for the database (or one is given on the context); the pruned listing otherwise, so a
    small database's prompts never change. ``listing``: always ``tools._schema_context.schema_view``.
    ``kb``: always the knowledge base's retrieval for the prompt's (intent, SQL), with descriptions
    (built on first use when the database has none).
    """

    AUTO = "auto"
    LISTING = "listing"
    KB = "kb"


@dataclass
class UsageMeter:
    """Totals for a run plus a resettable window for the node being executed."""

    total: RunUsage = field(default_factory=RunUsage)
    window: RunUsage = field(default_factory=RunUsage)

    def record(self, response: LLMResponse) -> None:
        u = RunUsage(
            **response.usage.model_dump(), llm_calls=1, llm_ms=response.latency_ms, cached_calls=int(response.cached)
        )
        self.total.add(u)
        self.window.add(u)

    def start_window(self) -> None:
        self.window = RunUsage()


class ToolInputError(ValueError):
    """The tool was asked for something that does not exist (a model's mistake, recorded on the node)."""


class NoModelError(RuntimeError):
    """An LLM tool was called without a model; the graph never does this (it plans around it)."""


@dataclass
class ToolContext:
    """Dependencies of the tools. ``policy=None`` means the strict policy."""

    db: Database
    policy: Policy | None = None
    model: ChatModel | None = None
    meter: UsageMeter = field(default_factory=UsageMeter)
    max_rows: int = 50
    schema_text: str | None = None
    exec_cache: dict[Any, Any] = field(default_factory=dict)  # statements -> results, see run_sql
    verify_copies: bool | None = None  # may checks copy the database? None: only under the sandbox policy
    schema_source: SchemaSource = SchemaSource.AUTO
    kb: Retriever | None = None  # the knowledge base to retrieve from (default: the database's own, if any)
    kb_budget: int | None = None  # characters of retrieved context per prompt (None: kb.DEFAULT_BUDGET)
    _scenarios: Any = field(default=None, repr=False)
    _kb_resolved: bool = field(default=False, repr=False)

    def active_policy(self) -> Policy:
        from actsagent.guard import Policy

        return self.policy or Policy.strict()

    def scenarios(self) -> Any:
        """The run's disposable scenario copies (``tools._scenarios.ScenarioEnv``), made on first use."""
        if self._scenarios is None:
            from actsagent.tools._scenarios import ScenarioEnv

            self._scenarios = ScenarioEnv(self)
        return self._scenarios

    def close_scenarios(self) -> None:
        """Drop the scenario copies (the run has returned; a resumed run makes them again)."""
        if self._scenarios is not None:
            self._scenarios.close()

    def schema(self) -> str:
        if self.schema_text is None:
            self.schema_text = self.db.schema().render()
        return self.schema_text

    def schema_vars(
        self, *, sql: str | list[str] | None = None, intent: str | None = None, prune: bool = True
    ) -> dict[str, Any]:
        """The ``_schema.md`` variables: a caller-supplied ``schema_text`` as given; else, when the
        context's knowledge base applies (``schema_source``), its retrieval for ``intent`` with the
        tables ``sql`` names; else the listing of the tables ``sql`` and ``intent`` touch plus FK
        neighbours (all of a small database; all of any database when ``prune`` is off)."""
        if self.schema_text is not None and self._schema_given:
            n = len(self.db.schema().tables)
            return {"schema": self.schema_text, "schema_shown": n, "schema_total": n}
        from actsagent.tools._schema_context import schema_view, sql_tables

        retriever = self.knowledge_base() if intent and intent.strip() else None
        if retriever is not None:
            from actsagent.kb import DEFAULT_BUDGET

            named = sql_tables(sql, self.db.dialect) if sql else set()
            ctx = retriever.retrieve(intent or "", budget_chars=self.kb_budget or DEFAULT_BUDGET, tables=named)
            return {**ctx.prompt_vars(), "schema_source": SchemaSource.KB.value}
        if not prune:
            sql = intent = None  # nothing named: the listing shows the whole database
        return schema_view(self.db.schema(), sql=sql, intent=intent).prompt_vars()

    def knowledge_base(self) -> Retriever | None:
        """The retriever the prompts take their schema from, or None for the listing; decided once
        per context from ``schema_source`` (see ``SchemaSource``)."""
        if self.schema_source == SchemaSource.LISTING:
            return None
        if not self._kb_resolved:
            self.kb, self._kb_resolved = self._resolve_kb(), True
        return self.kb

    def _resolve_kb(self) -> Retriever | None:
        from actsagent.tools._schema_context import shown_whole

        if self.schema_source == SchemaSource.AUTO and shown_whole(self.db.schema()):
            return None  # a small database is shown whole: its prompts stay as they were
        if self.kb is not None:
            return self.kb
        from actsagent import kb
        from actsagent.errors import UserError

        try:
            # LLM-free retrieval: a reformulation call would go unmetered and make runs unrepeatable
            return kb.retriever(self.db, build_missing=self.schema_source == SchemaSource.KB)
        except UserError as e:
            if self.schema_source == SchemaSource.KB:
                raise
            log.info("the prompts list the schema of %s: %s", self.db.name, e)
            return None

    def __post_init__(self) -> None:
        self._schema_given = self.schema_text is not None
        self.schema_source = SchemaSource(self.schema_source)
        if self.kb_budget is not None and self.kb_budget < 200:
            from actsagent.errors import UserError

            raise UserError("the knowledge base context budget must be at least 200 characters")

    def complete(
        self, template: str, *, role: str, response_model: type[BaseModel] | None = None, **variables: Any
    ) -> Any:
        """Render ``template``, call the model, meter the call; returns the LLM response.

        ``StructuredOutputError`` (the model's fault) propagates to the caller, which records it.
        """
        if self.model is None:
            raise NoModelError(f"{template}: no LLM configured")
        from actsagent.prompts import render

        messages = render(template, dialect=self.db.dialect, **variables)
        start = time.perf_counter()
        try:
            response = self.model.complete(messages, role=role, response_model=response_model)
        except Exception:
            # a failed call still cost time; count it so framework time excludes it
            self.meter.total.llm_ms += (time.perf_counter() - start) * 1000
            self.meter.window.llm_ms += (time.perf_counter() - start) * 1000
            self.meter.total.llm_calls += 1
            self.meter.window.llm_calls += 1
            raise
        self.meter.record(response)
        return response
