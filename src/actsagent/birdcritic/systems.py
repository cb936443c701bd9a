"""Systems under test: anything with ``solve(task, db, schema_text) -> SystemOutput``.

A system receives a ``PublicTask`` (no answer fields exist on it), the schema listing, and a
disposable sandbox copy of the task's database with ``preprocess_sql`` applied. It never
receives ``ScoringKeys``; the one exception, ``gold``, is a scorer-validation reference and is
flagged so the runner refuses it outside validation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from actsagent.birdcritic.tasks import BASELINE_FILES, PublicTask, data_dir
from actsagent.db.base import Database
from actsagent.errors import UserError

if TYPE_CHECKING:
    from actsagent.graphs.models import AgentEvent


class SystemOutput(BaseModel):
    pred_sqls: list[str]
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    notes: list[str] = []
    trace: Any = Field(default=None, exclude=True)  # the system's own run record (the agent's AgentRun), not logged


@runtime_checkable
class System(Protocol):
    """``db`` is a disposable copy with ``preprocess_sql`` applied. Replay systems that declare
    ``uses_database = False`` get ``None`` and an empty schema (no copy is made for them)."""

    name: str

    def solve(self, task: PublicTask, db: Database, schema_text: str) -> SystemOutput: ...


class IssueSqlSystem:
    """Returns the buggy SQL unchanged: the floor every repair system must beat."""

    name = "issue_sql"
    uses_database: ClassVar[bool] = False  # replays fixed SQL: the runner skips its sandbox copy

    def solve(self, task: PublicTask, db: Database, schema_text: str) -> SystemOutput:
        return SystemOutput(pred_sqls=list(task.issue_sql))


class GoldSystem:
    """SCORER VALIDATION ONLY: replays ``sol_sql`` through the scorer side. Never a system under test."""

    reference: ClassVar[bool] = True
    uses_database: ClassVar[bool] = False

    def __init__(self, task_set: str, root: Path | None = None) -> None:
        from actsagent.birdcritic.scorer import load_scoring_keys

        self.name = "gold"
        self._keys = load_scoring_keys(task_set, root=root)

    def solve(self, task: PublicTask, db: Database, schema_text: str) -> SystemOutput:
        return SystemOutput(
            pred_sqls=list(self._keys[task.instance_id].sol_sql),
            notes=["reference: gold sol_sql (scorer validation only)"],
        )


class BaselineSystem:
    """Replays an official example prediction file (``baselines/example_output/<model>``)."""

    uses_database: ClassVar[bool] = False

    def __init__(self, model: str, task_set: str, root: Path | None = None) -> None:
        if task_set not in BASELINE_FILES:
            raise UserError(f"no official baseline predictions for set {task_set!r} (only flash and pg530)")
        path = (root or data_dir()) / "baselines" / "example_output" / model / BASELINE_FILES[task_set]
        if not path.is_file():
            raise UserError(f"no baseline predictions at {path}")
        self.name = f"baseline:{model}"
        self._preds: dict[str, list[str]] = {}
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    preds = row.get("pred_sqls") or []
                    self._preds[str(row["instance_id"])] = [preds] if isinstance(preds, str) else list(preds)

    def solve(self, task: PublicTask, db: Database, schema_text: str) -> SystemOutput:
        if task.instance_id not in self._preds:
            return SystemOutput(pred_sqls=[], notes=["no prediction for this task in the baseline file"])
        return SystemOutput(pred_sqls=self._preds[task.instance_id])


def baseline_models(root: Path | None = None) -> list[str]:
    base = (root or data_dir()) / "baselines" / "example_output"
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


class AgentSystem:
    """The ACTS agent (tree, linear, regenerate) or single-shot repair, through ``actsagent.agent.repair``.

    All modes share one LLM configuration (the agent's), so comparisons are fair. ``on_event`` (the runner's
    progress display) gets each of the agent's events with the id of the task it belongs to.
    """

    def __init__(self, mode: str, model: Any = None) -> None:
        from actsagent.graphs.models import mode_of

        self.mode = mode_of(mode)
        self.model = model
        self.on_event: Callable[[str, AgentEvent], None] | None = None
        self.name = f"acts:{mode}" if mode != "single_shot" else "single_shot"
        if isinstance(model, str) and model:
            self.name += f"@{model}"

    def solve(self, task: PublicTask, db: Database, schema_text: str) -> SystemOutput:
        from actsagent.agent import repair
        from actsagent.guard import Policy

        sql: str | list[str] = list(task.issue_sql) if len(task.issue_sql) > 1 else join_statements(task.issue_sql)
        see = self.on_event
        on_event = None if see is None else partial(see, task.instance_id)
        run = repair(
            issue_text(task), sql, db, mode=self.mode, model=self.model, policy=Policy.sandbox(), on_event=on_event
        )
        return SystemOutput(
            pred_sqls=list(run.final_sql_statements),
            llm_calls=run.usage.llm_calls,
            tokens=run.usage.total_tokens,
            cost_usd=run.usage.cost_usd,
            notes=[f"agent status: {run.status}", *[n[:300] for n in run.notes[:5]]],
            trace=run,
        )


def issue_text(task: PublicTask) -> str:
    """What the user filed: the issue's text, and whether they filed it as an efficiency issue (a public field
    of the task that the scorer's speed tests follow; without it a request to speed a query up reads as a
    request to change what it returns)."""
    if not task.efficiency:
        return task.query
    return task.query + "\n\n(Filed as an efficiency issue: make the SQL faster without changing what it returns.)"


def join_statements(stmts: list[str]) -> str:
    return "\n".join(s.strip() if s.strip().endswith(";") else s.strip() + ";" for s in stmts if s.strip())


def make_system(
    spec: str, task_set: str, *, allow_reference: bool = False, root: Path | None = None, model: Any = None
):
    """``issue_sql`` | ``gold`` | ``baseline:<model>`` | ``acts:tree|escalate|linear|regenerate[@model]`` |
    ``single_shot[@model]``. ``model``, a chat model object, serves an agent system instead of the
    configured one (e.g. with a record/replay cache); the system keeps ``spec`` as its name."""
    name, _, model_name = spec.partition("@")
    if model is not None and (name.startswith("acts:") or name == "single_shot"):
        system = AgentSystem(name.split(":", 1)[1] if ":" in name else name, model)
        system.name = spec
        return system
    if name == "issue_sql":
        return IssueSqlSystem()
    if name == "gold":
        if not allow_reference:
            raise UserError(
                "`gold` replays the answers: it validates the scorer and is not a system under test "
                "(use `actsagent birdcritic validate`)"
            )
        return GoldSystem(task_set, root=root)
    if name.startswith("baseline:"):
        return BaselineSystem(spec.split(":", 1)[1], task_set, root=root)
    if name.startswith("acts:"):
        return AgentSystem(name.split(":", 1)[1], model_name or None)
    if name == "single_shot":
        return AgentSystem("single_shot", model_name or None)
    raise UserError(
        f"unknown system {spec!r}: use issue_sql, baseline:<model>, acts:tree, acts:escalate, acts:linear, "
        "acts:regenerate or single_shot (optionally @model)"
    )
