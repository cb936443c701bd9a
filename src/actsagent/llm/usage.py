"""Token and cost accounting: per-call records and totals, labelled by task and graph node.

A model always records into its own ``ledger``. To label calls (and to collect them in a ledger
of your own, e.g. one per run), wrap the work in ``with ledger.task(task_id):`` and, inside it,
``with ledger.node(node_id):``. Labels live in a context variable: they follow the code across
function calls and asyncio tasks, but not into plain threads (use ``contextvars.copy_context()``).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Usage(BaseModel):
    """Tokens and dollars of one completion (all its exchanges, repair included)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    price_known: bool = True  # False: some model had no price; its cost counts as 0
    estimated: bool = False  # True: the endpoint reported no usage; tokens are characters / 4

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            price_known=self.price_known and other.price_known,
            estimated=self.estimated or other.estimated,
        )


class RunUsage(Usage):
    """Usage of many completions (a plan node's, a run's): their tokens and dollars, how many calls, how long."""

    llm_calls: int = 0
    cached_calls: int = 0
    llm_ms: float = 0.0

    def add(self, other: RunUsage) -> None:
        for k in ("llm_calls", "cached_calls", "prompt_tokens", "completion_tokens", "cost_usd", "llm_ms"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.price_known = self.price_known and other.price_known
        self.estimated = self.estimated or other.estimated


class LLMResponse(BaseModel):
    """What ``ChatModel.complete`` returns. ``parsed`` is the validated ``response_model`` instance."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    parsed: Any = None
    model: str
    role: str = "tools"
    usage: Usage = Usage()
    latency_ms: float = 0.0
    cached: bool = False  # every exchange came from the on-disk cache
    attempts: int = 0  # requests sent to the provider, retries and the repair round included
    repaired: bool = False  # the first answer was invalid and the repair round fixed it


class CallRecord(BaseModel, frozen=True):
    """One exchange with the model (a repair round is its own record, purpose="repair")."""

    task_id: str | None = None
    node_id: str | None = None
    role: str
    model: str
    purpose: str = "answer"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    price_known: bool = True
    latency_ms: float = 0.0
    cached: bool = False
    attempts: int = 0
    at: float = Field(default_factory=time.time)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageTotals(BaseModel):
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    unpriced_models: list[str] = []  # models without a price (their cost counted as 0)


class _Labels(BaseModel, frozen=True):
    task_id: str | None = None
    node_id: str | None = None
    ledgers: tuple[Any, ...] = ()


_LABELS: contextvars.ContextVar[_Labels] = contextvars.ContextVar("actsagent_llm_labels", default=_Labels())  # noqa: B039 - frozen model


def current_labels() -> tuple[str | None, str | None]:
    """The (task_id, node_id) that calls made now will be labelled with."""
    lab = _LABELS.get()
    return lab.task_id, lab.node_id


class UsageLedger:
    """Thread-safe, append-only list of CallRecords with totals by task and node."""

    def __init__(self) -> None:
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()

    @contextmanager
    def task(self, task_id: str) -> Iterator[UsageLedger]:
        """Label calls made inside with ``task_id`` (node cleared) and collect them here too."""
        with self._bind(task_id=task_id, node_id=None):
            yield self

    @contextmanager
    def node(self, node_id: str) -> Iterator[UsageLedger]:
        """Label calls made inside with ``node_id`` (task kept) and collect them here too."""
        with self._bind(task_id=_LABELS.get().task_id, node_id=node_id):
            yield self

    @contextmanager
    def _bind(self, *, task_id: str | None, node_id: str | None) -> Iterator[None]:
        cur = _LABELS.get()
        ledgers = cur.ledgers if any(led is self for led in cur.ledgers) else (*cur.ledgers, self)
        token = _LABELS.set(_Labels(task_id=task_id, node_id=node_id, ledgers=ledgers))
        try:
            yield
        finally:
            _LABELS.reset(token)

    def append(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self, *, task_id: str | None = None, node_id: str | None = None) -> list[CallRecord]:
        with self._lock:
            recs = list(self._records)
        return [
            r for r in recs if (task_id is None or r.task_id == task_id) and (node_id is None or r.node_id == node_id)
        ]

    def totals(self, *, task_id: str | None = None, node_id: str | None = None) -> UsageTotals:
        return _sum(self.records(task_id=task_id, node_id=node_id))

    def by_node(self, *, task_id: str | None = None) -> dict[str | None, UsageTotals]:
        return self._group("node_id", self.records(task_id=task_id))

    def by_task(self) -> dict[str | None, UsageTotals]:
        return self._group("task_id", self.records())

    def by_role(self, *, task_id: str | None = None) -> dict[str, UsageTotals]:
        return self._group("role", self.records(task_id=task_id))

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    @staticmethod
    def _group(attr: str, recs: list[CallRecord]) -> dict:
        groups: dict = {}
        for r in recs:
            groups.setdefault(getattr(r, attr), []).append(r)
        return {k: _sum(v) for k, v in groups.items()}


def record_call(own: UsageLedger, **fields: Any) -> CallRecord:
    """Append one record, labelled from the context, to ``own`` and to every ledger bound by task()/node()."""
    lab = _LABELS.get()
    rec = CallRecord(task_id=lab.task_id, node_id=lab.node_id, **fields)
    targets = [own] + [led for led in lab.ledgers if led is not own]
    for led in targets:
        led.append(rec)
    return rec


def _sum(recs: list[CallRecord]) -> UsageTotals:
    t = UsageTotals()
    unpriced: set[str] = set()
    for r in recs:
        t.calls += 1
        t.cached_calls += int(r.cached)
        t.prompt_tokens += r.prompt_tokens
        t.completion_tokens += r.completion_tokens
        t.cost_usd += r.cost_usd
        t.latency_ms += r.latency_ms
        if not r.price_known:
            unpriced.add(r.model)
    t.total_tokens = t.prompt_tokens + t.completion_tokens
    t.unpriced_models = sorted(unpriced)
    return t
