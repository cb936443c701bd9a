"""Compare BIRD-CRITIC runs side by side: accuracy overall and per category, cost, time, tasks won and lost.

Each run is an output folder of ``actsagent birdcritic run`` (its ``results.jsonl``). Runs are
compared on the tasks they all hold; when their task sets differ the comparison says so, so a
run that covered easier tasks cannot look better by accident. Records are untrusted input: a
line that is not a task record is counted and left out, never guessed at.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from actsagent.birdcritic.runner import CATEGORIES, RESULTS_FILE, _pct
from actsagent.errors import UserError
from actsagent.reporting import Report, ReportTable, ResultLog, save_figure, write_with_data

STEM = "compare"


class TaskRecord(BaseModel):
    """The fields of one ``results.jsonl`` line that a comparison reads."""

    model_config = ConfigDict(extra="ignore")

    instance_id: str
    category: str = "?"
    passed: bool = False
    status: str = ""
    llm_calls: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)
    total_s: float = Field(default=0.0, ge=0)

    @field_validator("instance_id", mode="before")
    @classmethod
    def _id_text(cls, v: Any) -> str:  # flash writes ints, other sets strings: compare on the text
        if isinstance(v, bool) or not isinstance(v, (int, str)) or not str(v).strip():
            raise ValueError("instance_id must be a non-empty string or an integer")
        return str(v).strip()

    @field_validator("llm_calls", "tokens", "total_s", mode="before")
    @classmethod
    def _none_is_zero(cls, v: Any) -> Any:
        return 0 if v is None else v


class RunData(BaseModel):
    label: str
    path: str
    system: str
    records: dict[str, TaskRecord]
    skipped_lines: int = 0


class RunFigures(BaseModel):
    """One run's figures on the compared tasks."""

    label: str
    system: str
    tasks: int
    passed: int
    accuracy: float
    unsupported: int
    by_category: dict[str, list[int]]  # category -> [passed, tasks]
    llm_calls: int
    llm_calls_per_task: float
    tokens: int
    tokens_per_task: float
    median_s_per_task: float


class PairResult(BaseModel):
    a: str
    b: str
    a_wins: list[str]  # tasks a passes and b fails
    b_wins: list[str]


class Comparison(BaseModel):
    runs: list[RunFigures]
    tasks_compared: int
    task_ids: list[str]
    only_in: dict[str, int]  # run label -> tasks it holds that not every run holds
    pairs: list[PairResult]
    warnings: list[str]
    # tasks at least one run passes: what a perfect choice among these runs' answers would reach
    any_passed: list[str] = []


def load_run(path: str | Path) -> RunData:
    """One run folder; a missing folder or results file is the caller's mistake, said in one line."""
    folder = Path(path)
    results = folder / RESULTS_FILE
    if not folder.is_dir():
        raise UserError(f"not a run folder: {folder}")
    if not results.is_file():
        raise UserError(f"no {RESULTS_FILE} in {folder}: is it an output folder of `actsagent birdcritic run`?")
    records: dict[str, TaskRecord] = {}
    systems: set[str] = set()
    raw = ResultLog(results, key="instance_id").records()
    skipped = 0
    for row in raw:
        try:
            rec = TaskRecord.model_validate(row)
        except ValidationError:
            skipped += 1
            continue
        records[rec.instance_id] = rec  # a task logged twice: the later line wins, as on resume
        if isinstance(row.get("system"), str):
            systems.add(row["system"])
    if not records:
        raise UserError(f"{results} holds no task records")
    return RunData(
        label=folder.name or str(folder),
        path=str(folder),
        system=", ".join(sorted(systems)) or "?",
        records=records,
        skipped_lines=skipped,
    )


def _unique_labels(runs: list[RunData]) -> None:
    """Folder names label the runs; two folders with one name are told apart by their paths."""
    seen: dict[str, int] = defaultdict(int)
    for r in runs:
        seen[r.label] += 1
    for r in runs:
        if seen[r.label] > 1:
            r.label = r.path
    if len({r.label for r in runs}) < len(runs):
        raise UserError("the same run folder is given more than once")


def _id_order(ids: set[str]) -> list[str]:
    return sorted(ids, key=lambda i: (0, int(i), "") if i.isdigit() else (1, 0, i))


def compare(paths: Sequence[str | Path]) -> Comparison:
    """Figures per run and pairwise wins on the intersection of the runs' tasks."""
    if len(paths) < 2:
        raise UserError("give at least two run folders to compare")
    runs = [load_run(p) for p in paths]
    _unique_labels(runs)
    common = set.intersection(*(set(r.records) for r in runs))
    warnings = [
        f"{r.label}: {r.skipped_lines} line(s) of {RESULTS_FILE} are not task records and were left out"
        for r in runs
        if r.skipped_lines
    ]
    only_in = {r.label: len(set(r.records) - common) for r in runs}
    if any(only_in.values()):
        extra = ", ".join(f"{k}: {v} more" for k, v in only_in.items() if v)
        warnings.append(f"the runs hold different task sets: compared on the {len(common)} tasks they share ({extra})")
    if not common:
        raise UserError("the runs share no task: nothing to compare")
    ids = _id_order(common)
    figures = [_figures(r, ids) for r in runs]
    pairs = []
    for a, b in combinations(runs, 2):
        pa, pb = ({i for i in ids if r.records[i].passed} for r in (a, b))
        pairs.append(PairResult(a=a.label, b=b.label, a_wins=_id_order(pa - pb), b_wins=_id_order(pb - pa)))
    return Comparison(
        runs=figures,
        tasks_compared=len(ids),
        task_ids=ids,
        only_in=only_in,
        pairs=pairs,
        warnings=warnings,
        any_passed=[i for i in ids if any(r.records[i].passed for r in runs)],
    )


def _figures(run: RunData, ids: list[str]) -> RunFigures:
    recs = [run.records[i] for i in ids]
    scored = [r for r in recs if r.status != "unsupported"]
    by_cat: dict[str, list[int]] = {}
    for r in recs:
        cell = by_cat.setdefault(r.category, [0, 0])
        cell[0] += r.passed
        cell[1] += 1
    passed = sum(r.passed for r in recs)
    calls, tokens = sum(r.llm_calls for r in recs), sum(r.tokens for r in recs)
    n = len(scored) or 1
    return RunFigures(
        label=run.label,
        system=run.system,
        tasks=len(recs),
        passed=passed,
        accuracy=_pct(passed, len(recs)),
        unsupported=len(recs) - len(scored),
        by_category=dict(sorted(by_cat.items(), key=lambda kv: _category_rank(kv[0]))),
        llm_calls=calls,
        llm_calls_per_task=round(calls / n, 2),
        tokens=tokens,
        tokens_per_task=round(tokens / n, 1),
        median_s_per_task=round(statistics.median(r.total_s for r in scored), 3) if scored else 0.0,
    )


def _category_rank(c: str) -> tuple[int, str]:
    return (CATEGORIES.index(c), "") if c in CATEGORIES else (len(CATEGORIES), c)


def categories(cmp: Comparison) -> list[str]:
    return sorted({c for f in cmp.runs for c in f.by_category}, key=_category_rank)


def to_report(cmp: Comparison, out_dir: Path | None = None) -> Report:
    """The comparison as JSON + markdown tables (and the plot, when ``out_dir`` is given)."""
    cats = categories(cmp)
    metrics = [
        ("system", "system"),
        ("tasks", "tasks"),
        ("unsupported", "unsupported"),
        ("passed", "passed"),
        ("accuracy %", "accuracy"),
        ("LLM calls", "llm_calls"),
        ("LLM calls / task", "llm_calls_per_task"),
        ("tokens", "tokens"),
        ("tokens / task", "tokens_per_task"),
        ("median s / task", "median_s_per_task"),
    ]
    overall = ReportTable(
        title=f"Overall, on the {cmp.tasks_compared} shared tasks",
        columns=["metric", *[f.label for f in cmp.runs]],
        rows=[[name, *[getattr(f, attr) for f in cmp.runs]] for name, attr in metrics],
    )
    per_cat = ReportTable(
        title="Passed by category (passed / tasks, accuracy %)",
        columns=["category", "tasks", *[f.label for f in cmp.runs]],
        rows=[
            [
                c,
                _cat_cell(cmp.runs[0], c)[1],
                *[f"{p}/{n} ({_pct(p, n)})" for p, n in (_cat_cell(f, c) for f in cmp.runs)],
            ]
            for c in cats
        ],
    )
    pairs = ReportTable(
        title="Pairwise: tasks one run passes and the other fails",
        columns=["run A", "run B", "A wins", "B wins", "A wins (ids)", "B wins (ids)"],
        rows=[
            [p.a, p.b, len(p.a_wins), len(p.b_wins), ", ".join(p.a_wins) or "-", ", ".join(p.b_wins) or "-"]
            for p in cmp.pairs
        ],
    )
    summary: dict[str, Any] = {"tasks compared": cmp.tasks_compared}
    for f in cmp.runs:
        summary[f"{f.label}: passed"] = f"{f.passed} ({f.accuracy}%)"
    summary["passed by at least one run"] = f"{len(cmp.any_passed)} ({_pct(len(cmp.any_passed), cmp.tasks_compared)}%)"
    report = Report(
        name="BIRD-CRITIC runs compared",
        config={"runs": [f.label for f in cmp.runs]},
        summary=summary,
        tables=[overall, per_cat, pairs],
        notes=[
            *cmp.warnings,
            "Unsupported tasks count as failures (accuracy over all shared tasks); "
            "LLM calls, tokens and times are over the supported ones.",
        ],
    )
    if out_dir is not None and cats:
        report.plots = [str(plot_categories(cmp, Path(out_dir) / f"{STEM}_by_category.png"))]
    return report


def _cat_cell(f: RunFigures, c: str) -> tuple[int, int]:
    p, n = f.by_category.get(c, [0, 0])
    return p, n


def plot_categories(cmp: Comparison, path: Path) -> Path:
    """Grouped bars: accuracy per category (and overall), one bar per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [*categories(cmp), "all"]
    width = 0.8 / len(cmp.runs)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(cmp.runs) / 2)), 4))
    for k, f in enumerate(cmp.runs):
        vals = [_pct(*_cat_cell(f, g)) for g in groups[:-1]] + [f.accuracy]
        xs = [i + (k - (len(cmp.runs) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, vals, width=width, label=f.label[:40])
        for x, v in zip(xs, vals):
            ax.text(x, v + 1, f"{v:.0f}", ha="center", fontsize=7)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 105)
    ax.set_ylabel("passed (% of shared tasks)")
    ax.set_title(f"BIRD-CRITIC runs on {cmp.tasks_compared} shared tasks", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def write(cmp: Comparison, out_dir: str | Path) -> Report:
    """``compare.json`` / ``compare.md`` (the report), ``compare_by_category.png``, ``compare_data.json`` (the model)."""
    return write_with_data(to_report(cmp, Path(out_dir)), cmp, out_dir, STEM)
