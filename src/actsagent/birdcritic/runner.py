"""Run a system on BIRD-CRITIC tasks: sandbox, solve, score in a fresh copy, log, report.

Per task: a copy of the template with ``preprocess_sql`` applied goes to the system, which sees
only the ``PublicTask``, the schema listing and that copy. Its statements are then scored in a
second fresh copy (preprocess, prediction committed statement by statement, test cases,
clean-up), as the official evaluation does. One JSON line per finished task is appended to
``results.jsonl``; a rerun skips what is there, so a killed run loses only tasks in flight.
"""

from __future__ import annotations

import fcntl
import os
import statistics
import time
import uuid
from collections import Counter, defaultdict
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from actsagent.batch_engine import Engine, run_batch
from actsagent.birdcritic.scorer import ScoreResult, ScorerVariant, ScoringKeys, load_scoring_keys, score
from actsagent.birdcritic.systems import AgentSystem, System, SystemOutput
from actsagent.birdcritic.tasks import PublicTask, data_dir, load_tasks, native_ids
from actsagent.birdcritic.templates import TemplateInfo, ensure_templates, needed_extensions, server_capabilities
from actsagent.config import Limits
from actsagent.db import admin
from actsagent.db.sandbox import sandbox
from actsagent.errors import DatabaseUnavailable
from actsagent.reporting import Report, ReportTable, ResultLog, batch_progress, save_figure

if TYPE_CHECKING:
    from actsagent.graphs.models import AgentEvent

RESULTS_FILE = "results.jsonl"
COPY_PREFIX = "bcx_"
SOLVE_LIMITS = Limits(statement_timeout_s=60.0, max_rows=10_000)
CATEGORIES = ("Query", "Management", "Personalization", "Efficiency")


def _copy_name(db_id: str) -> str:
    # The pid in the name lets a later run drop copies orphaned by a killed process.
    return f"{COPY_PREFIX}{os.getpid()}_{uuid.uuid4().hex[:8]}_{db_id[:30]}"


def drop_orphan_copies(admin_url: str) -> int:
    """Drop task copies left by runs that were killed (their pid is gone)."""
    dropped = 0
    for name in admin.databases(admin_url, like=COPY_PREFIX.replace("_", r"\_") + "%"):
        try:
            pid = int(name[len(COPY_PREFIX) :].split("_", 1)[0])
        except ValueError:
            continue
        if not _alive(pid):
            admin.drop_database(admin_url, name)
            dropped += 1
    return dropped


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TaskRunner:
    """Everything one task needs; the keys stay here and only reach ``score``."""

    def __init__(
        self,
        system: System,
        templates: dict[str, TemplateInfo],
        keys: dict[str, ScoringKeys],
        extensions: set[str],
        *,
        scorer_variant: ScorerVariant = "official",
        ids: dict[str, int | str] | None = None,
    ) -> None:
        self.system = system
        self.ids = ids or {}  # the task file's id type for the record (ints in flash)
        self.scorer_variant = scorer_variant
        self.templates = templates
        self._keys = keys
        self.extensions = extensions

    def unsupported_reason(self, task: PublicTask) -> str | None:
        tpl = self.templates.get(task.db_id)
        if tpl is None or not tpl.ok:
            return tpl.reason if tpl else f"no template for {task.db_id!r}"
        # What scoring needs (setup, gold, tests), not the issue: the buggy SQL may use a missing
        # feature (often the bug itself), and prose may use words such as "similarity".
        keys = self._keys.get(task.instance_id)
        texts = [*task.preprocess_sql, *task.clean_up_sql]
        if keys is not None:
            texts += [*keys.sol_sql, *keys.test_cases]
        missing = needed_extensions(texts) - self.extensions
        if missing:
            return f"needs {', '.join(sorted(missing))}, which this server lacks (extension or build feature)"
        return None

    def _solve(self, task: PublicTask, db: Any, schema_text: str) -> tuple[SystemOutput, str | None]:
        try:
            return self.system.solve(task, db, schema_text), None
        except DatabaseUnavailable:
            raise
        except Exception as e:
            msg = f"{type(e).__name__}: {e}"
            return SystemOutput(pred_sqls=[], notes=[f"system error: {msg}"]), msg

    def base_record(self, task: PublicTask) -> dict[str, Any]:
        """The fields every result line starts with; the id keeps the task file's type (ints in flash)."""
        return {
            "instance_id": self.ids.get(task.instance_id, task.instance_id),
            "db_id": task.db_id,
            "category": task.category,
            "efficiency": task.efficiency,
            "system": self.system.name,
        }

    def solve(self, task: PublicTask) -> tuple[SystemOutput, str | None, str | None]:
        """The system's answer, worked out in its own copy with preprocess applied.

        Returns (output, system error, preprocess error); call only for supported tasks.
        """
        url = self.templates[task.db_id].url
        assert url is not None
        if not getattr(self.system, "uses_database", True):
            return (*self._solve(task, None, ""), None)
        with sandbox(url, limits=SOLVE_LIMITS, name=_copy_name(task.db_id)) as work:
            pre = work.execute_script(task.preprocess_sql, timeout_s=60) if task.preprocess_sql else []
            pre_error = next((r.describe() for r in pre if not r.ok), None)
            try:
                schema_text = work.schema(refresh=True).render()
            except Exception as e:
                schema_text = f"-- schema unavailable: {e}"
            return (*self._solve(task, work, schema_text), pre_error)

    def score_prediction(self, task: PublicTask, pred_sqls: list[str]) -> ScoreResult | None:
        """Score ``pred_sqls`` in a fresh copy, exactly like the official flow; None without scoring keys."""
        keys = self._keys.get(task.instance_id)
        url = self.templates[task.db_id].url
        if keys is None or url is None:
            return None
        with sandbox(url, name=_copy_name(task.db_id)) as fresh:
            fresh.close()  # the scorer opens its own psycopg2-like connection
            return score(task, keys, pred_sqls, fresh.url, variant=self.scorer_variant)

    def close(self) -> None:
        """Nothing to free: every task opens and drops its own copies (a batch engine calls this)."""

    def record(self, task: PublicTask) -> dict[str, Any]:
        return self.run(task)

    def unsupported_record(self, task: PublicTask) -> dict[str, Any] | None:
        """The finished record of a task this runner cannot run (``unsupported_reason``), or None."""
        reason = self.unsupported_reason(task)
        if reason is None:
            return None
        return self.base_record(task) | {
            "status": "unsupported",
            "passed": False,
            "reason": reason,
            "total_s": 0.0,
            "llm_calls": 0,
            "tokens": 0,
        }

    def run(self, task: PublicTask) -> dict[str, Any]:
        if (skipped := self.unsupported_record(task)) is not None:
            return skipped
        start = time.perf_counter()
        rec = self.base_record(task)
        t0 = time.perf_counter()
        out, system_error, pre_error = self.solve(task)
        solve_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        result = self.score_prediction(task, out.pred_sqls)
        score_s = time.perf_counter() - t1
        rec |= {
            "status": "passed" if result and result.passed else ("error" if result is None else "failed"),
            "passed": bool(result and result.passed),
            "score_status": result.status if result else "no_keys",
            "tests_total": result.tests_total if result else 0,
            "tests_passed": result.tests_passed if result else 0,
            "failed_tests": result.failed_tests if result else [],
            "messages": [m[:500] for m in (result.messages if result else ["no scoring keys for this task"])][:5],
            "pred_sqls": out.pred_sqls,
            "llm_calls": out.llm_calls,
            "tokens": out.tokens,
            "cost_usd": out.cost_usd,
            "notes": out.notes[:10],
            "system_error": system_error,
            "preprocess_error": pre_error,
            "solve_s": round(solve_s, 3),
            "score_s": round(score_s, 3),
            "total_s": round(time.perf_counter() - start, 3),
        }
        return rec


def make_task_runner(
    task_set: str,
    system: System,
    tasks: list[PublicTask],
    *,
    root: Path | None = None,
    scorer_variant: ScorerVariant = "official",
) -> TaskRunner:
    """A runner for ``tasks``: their template databases built, copies of killed runs dropped, keys loaded."""
    server = admin.server_admin_url()
    drop_orphan_copies(server)
    templates = ensure_templates(sorted({t.db_id for t in tasks}), admin_url=server, root=root)
    return TaskRunner(
        system,
        templates,
        load_scoring_keys(task_set, root=root),
        server_capabilities(server),
        scorer_variant=scorer_variant,
        ids=native_ids(task_set, root),
    )


def run_benchmark(
    task_set: str,
    system: System,
    out_dir: str | Path,
    *,
    workers: int = 2,
    limit: int | None = None,
    ids: list[str] | None = None,
    progress: bool = True,
    root: Path | None = None,
    report_name: str | None = None,
    scorer_variant: ScorerVariant = "official",
    engine: Engine | None = None,
) -> Report:
    """Run (or resume) ``system`` on a task set; returns the summary report written to ``out_dir``.

    ``engine`` runs the tasks on threads here (the default, ``workers`` of them) or on a Ray cluster."""
    if getattr(system, "reference", False) and not report_name:
        report_name = f"BIRD-CRITIC {task_set} scorer validation ({system.name}, not a system under test)"
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = load_tasks(task_set, root=root, ids=ids, limit=limit)
    with _exclusive(out):
        return _run_locked(
            task_set,
            system,
            out,
            tasks,
            engine=engine or Engine(workers=workers),
            progress=progress,
            root=root,
            report_name=report_name,
            scorer_variant=scorer_variant,
        )


@contextmanager
def _exclusive(out: Path):
    """One writer per output folder: a second run on it waits, then resumes (and finds the work done)."""
    with (out / ".lock").open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            Console(stderr=True).print(f"[yellow]{out} is being written by another run; waiting for it[/]")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run_locked(
    task_set: str,
    system: System,
    out: Path,
    tasks: list[PublicTask],
    *,
    engine: Engine,
    progress: bool,
    root: Path | None,
    report_name: str | None,
    scorer_variant: ScorerVariant,
) -> Report:
    log = ResultLog(out / RESULTS_FILE, key="instance_id")
    log.merge_parts()  # results a killed Ray run left in its partitions
    _check_same_system(log, system.name)
    pending = log.pending(tasks, lambda t: t.instance_id)
    if pending:
        runner = make_task_runner(task_set, system, pending, root=root, scorer_variant=scorer_variant)
        _run_pool(runner, pending, log, engine=engine, progress=progress, total=len(tasks))
    records = {str(r["instance_id"]): r for r in log.records()}
    chosen = [records[t.instance_id] for t in tasks if t.instance_id in records]
    report = summarize(
        chosen, task_set=task_set, system=system.name, workers=engine.workers, out_dir=out, name=report_name
    )
    report.config["engine"] = engine.name
    report.write(out, stem="summary")
    return report


def _check_same_system(log: ResultLog, name: str) -> None:
    from actsagent.errors import UserError

    others = {str(r["system"]) for r in log.records() if r.get("system") is not None} - {name}
    if others:
        raise UserError(f"{log.path} holds results of {', '.join(sorted(others))}; use another --out for {name}")


def _run_pool(
    runner: TaskRunner, pending: list[PublicTask], log: ResultLog, *, engine: Engine, progress: bool, total: int
) -> None:
    done_before = total - len(pending)
    passed = sum(bool(r.get("passed")) for r in log.records())
    # per-step progress from the agent: in this process only (Ray workers hold copies of the system)
    shows_steps = progress and engine.name == "local"
    agent = (
        runner.system if isinstance(runner.system, AgentSystem) and shows_steps and not runner.system.on_event else None
    )
    with batch_progress(disable=not progress) as bar:
        job = bar.add_task(f"{runner.system.name}", total=total, completed=done_before, info="")

        def step(task_id: str, ev: AgentEvent) -> None:  # the node a task's agent is working on
            if ev.type == "node_start":
                bar.update(job, info=f"passed {passed} · task {task_id}: {ev.message[:60]}")

        if agent is not None:
            agent.on_event = step
        try:  # DatabaseUnavailable and bugs stop the run; finished work is logged
            for rec in run_batch(partial(_same, runner), pending, log, engine=engine, name="bc-worker"):
                passed += bool(rec.get("passed"))
                bar.update(job, advance=1, info=f"passed {passed}")
        finally:
            if agent is not None:
                agent.on_event = None


def _same(runner: TaskRunner) -> TaskRunner:
    """The worker every process runs: a copy of the driver's runner (templates built, keys loaded once)."""
    return runner


# --------------------------------------------------------------------------- summary and plots


def summarize(
    records: list[dict[str, Any]], *, task_set: str, system: str, workers: int, out_dir: Path, name: str | None = None
) -> Report:
    n = len(records)
    unsupported = [r for r in records if r.get("status") == "unsupported"]
    scored = [r for r in records if r.get("status") != "unsupported"]
    passed = [r for r in records if r.get("passed")]
    solve = [r["solve_s"] for r in scored if "solve_s" in r]
    totals = [r.get("total_s", 0.0) for r in scored]
    tokens = [r.get("tokens", 0) for r in scored]
    calls = [r.get("llm_calls", 0) for r in scored]
    status = Counter(r.get("score_status", r.get("status")) for r in records)
    summary = {
        "tasks": n,
        "unsupported": len(unsupported),
        "scored": len(scored),
        "passed": len(passed),
        "accuracy_all": _pct(len(passed), n),
        "accuracy_supported": _pct(len(passed), len(scored)),
        "llm_calls_total": sum(calls),
        "tokens_total": sum(tokens),
        "llm_calls_per_task": round(sum(calls) / len(scored), 2) if scored else 0,
        "tokens_per_task": round(sum(tokens) / len(scored), 1) if scored else 0,
        "solve_s_mean": round(statistics.fmean(solve), 3) if solve else 0,
        "task_s_mean": round(statistics.fmean(totals), 3) if totals else 0,
        "task_s_median": round(statistics.median(totals), 3) if totals else 0,
    }
    tables = [
        _group_table("Accuracy by category", records, "category", order=CATEGORIES),
        _group_table("Accuracy by database", records, "db_id"),
        ReportTable(title="Outcomes", columns=["outcome", "tasks"], rows=[[k, v] for k, v in status.most_common()]),
    ]
    if unsupported:
        tables.append(
            ReportTable(
                title="Unsupported tasks",
                columns=["instance_id", "db_id", "reason"],
                rows=[[r["instance_id"], r["db_id"], r.get("reason", "")] for r in unsupported],
            )
        )
    notes = [
        "Scored on the sample databases (3 rows per table): a proxy, not the official metric "
        "(see shared/data/birdcritic/README.md, section 5).",
        "accuracy_all counts unsupported tasks as failures; accuracy_supported leaves them out.",
    ]
    report = Report(
        name=name or f"BIRD-CRITIC {task_set}: {system}",
        config={
            "task_set": task_set,
            "system": system,
            "workers": workers,
            "data": str(data_dir()),
            "results": str(out_dir / RESULTS_FILE),
        },
        summary=summary,
        tables=tables,
        notes=notes,
    )
    report.plots = _plots(records, out_dir, title=f"{task_set} / {system}")
    return report


def _pct(a: int, b: int) -> float:
    return round(100.0 * a / b, 2) if b else 0.0


def _group_table(title: str, records: list[dict[str, Any]], key: str, order: tuple[str, ...] = ()) -> ReportTable:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[str(r.get(key))].append(r)
    names = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
    rows = []
    for k in names:
        g = groups[k]
        sup = [r for r in g if r.get("status") != "unsupported"]
        p = sum(bool(r.get("passed")) for r in g)
        rows.append([k, len(g), len(g) - len(sup), p, _pct(p, len(g)), _pct(p, len(sup))])
    return ReportTable(
        title=title, rows=rows, columns=[key, "tasks", "unsupported", "passed", "accuracy %", "accuracy supported %"]
    )


def _plots(records: list[dict[str, Any]], out_dir: Path, *, title: str) -> list[str]:
    if not records:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    cats = [c for c in CATEGORIES if any(r.get("category") == c for r in records)]
    cats += sorted({str(r.get("category")) for r in records} - set(cats))
    acc = []
    for c in cats:
        g = [r for r in records if r.get("category") == c and r.get("status") != "unsupported"]
        acc.append(_pct(sum(bool(r.get("passed")) for r in g), len(g)))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(cats, acc, color="#4C72B0")
    ax.set_ylabel("accuracy (% of supported tasks)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Accuracy by category: {title}", fontsize=9)
    for i, v in enumerate(acc):
        ax.text(i, v + 1, f"{v:.1f}", ha="center", fontsize=8)
    paths.append(str(save_figure(fig, out_dir / "accuracy_by_category.png")))

    scored = [r for r in records if r.get("status") != "unsupported"]
    for field, label, fname in (
        ("total_s", "seconds per task", "time_per_task.png"),
        ("tokens", "tokens per task", "tokens_per_task.png"),
    ):
        vals = [float(r.get(field, 0) or 0) for r in scored]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        colors = ["#55A868" if r.get("passed") else "#C44E52" for r in scored]
        ax.bar(range(len(vals)), vals, color=colors, width=1.0)
        ax.set_xlabel("task (in run order); green = passed, red = failed")
        ax.set_ylabel(label)
        ax.set_title(f"{label}: {title}", fontsize=9)
        paths.append(str(save_figure(fig, out_dir / fname)))
    return paths
