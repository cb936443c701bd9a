"""What every tool needs, injected rather than global: the database, the policy, the model, a meter.

Tools never open connections or read settings themselves; the graph (or a caller using a tool
on its own) builds one ``ToolContext`` and passes it in. LLM usage is metered here so the graph
can put each call's tokens and time on the plan node that caused it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from actsagent.db import Database

if TYPE_CHECKING:
    from actsagent.guard import Policy
    from actsagent.llm import ChatModel


class Usage(BaseModel):
    """LLM usage and time; added up per node and per run."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    llm_ms: float = 0.0
    cached_calls: int = 0

    def add(self, other: Usage) -> None:
        for k in Usage.model_fields:
            setattr(self, k, getattr(self, k) + getattr(other, k))

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class UsageMeter:
    """Totals for a run plus a resettable window for the node being executed."""

    total: Usage = field(default_factory=Usage)
    window: Usage = field(default_factory=Usage)

    def record(self, response: Any) -> None:
        u = Usage(
            llm_calls=1,
            llm_ms=float(getattr(response, "latency_ms", 0.0) or 0.0),
            cached_calls=1 if getattr(response, "cached", False) else 0,
        )
        usage = getattr(response, "usage", None)
        if usage is not None:
            u.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            u.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
            u.cost_usd = float(getattr(usage, "cost_usd", 0.0) or 0.0)
        self.total.add(u)
        self.window.add(u)

    def start_window(self) -> None:
        self.window = Usage()


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
    _scenarios: Any = field(default=None, repr=False)

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

    def schema_vars(self, *, sql: str | list[str] | None = None, intent: str | None = None) -> dict[str, Any]:
        """The ``_schema.md`` variables: the tables ``sql`` and ``intent`` touch plus FK neighbours
        (all of a small database); a caller-supplied ``schema_text`` is shown as given."""
        if self.schema_text is not None and self._schema_given:
            n = len(self.db.schema().tables)
            return {"schema": self.schema_text, "schema_shown": n, "schema_total": n}
        from actsagent.tools._schema_context import schema_view

        return schema_view(self.db.schema(), sql=sql, intent=intent).prompt_vars()

    def __post_init__(self) -> None:
        self._schema_given = self.schema_text is not None

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
