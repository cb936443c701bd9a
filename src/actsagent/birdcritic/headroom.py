"""How far choosing among answers can take a system: the headroom left by the answers runs have produced.

Given many runs of BIRD-CRITIC (any systems, any days, the same task set or overlapping ones), this
pools every scored answer per task and per system and asks what a perfect chooser could reach:

* ``p1``: a system's pass rate per run (the mean over tasks of the share of its runs that pass);
* ``majority of k``: the chance that most of k answers drawn from its runs pass (every k-subset of a
  task's runs, averaged). A vote on results picks the passing result at least then, when passing
  answers return the same rows; it is what sampling k times and voting can be counted on to give;
* ``any of k``: the chance that at least one of k answers passes: a perfect judge choosing among k
  answers, the ceiling of any selection over k samples;
* ``ever``: tasks any answer of the system passed, and over all systems together.

A task every answer fails cannot be won by choosing among answers; only a new kind of answer can.
If a system answers nearly every task the same way run after run (``majority of k`` close to ``p1``),
sampling it more adds little: its misreadings are its own, not noise. The figures measure whoever
answered the runs (a relay's readers are not a named model), pooled across the runs given.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from math import comb
from pathlib import Path

from pydantic import BaseModel

from actsagent.birdcritic.compare import _id_order, load_run
from actsagent.birdcritic.runner import _pct
from actsagent.errors import UserError
from actsagent.reporting import Report, ReportTable, save_figure, write_with_data

STEM = "headroom"


class SystemHeadroom(BaseModel):
    """One system's figures over the tasks where it has at least ``k`` runs."""

    system: str
    runs: int
    tasks: int  # tasks it answered at least once
    answers: int
    tasks_k: int  # tasks with at least k of its answers (the k-figures are over these)
    p1: float | None  # None: no task with k of its answers
    majority_k: float | None
    any_k: float | None
    ever: int
    never: int
    always: int
    mixed: int  # tasks some of its answers pass and some fail


class Headroom(BaseModel):
    k: int
    reference: str | None
    runs: int
    tasks: int
    answers: int
    systems: list[SystemHeadroom]
    ever_passed: list[str]  # tasks any answer of any system passes
    never_passed: list[str]
    # over the tasks the reference has at least k answers to (its p1 is over these): how many some answer passes
    reference_tasks: int = 0
    reference_ever: int = 0
    warnings: list[str] = []


def _majority(passes: list[bool], k: int) -> float:
    """Share of the k-subsets of a task's answers in which most answers pass (exact, by counting)."""
    n, good = len(passes), sum(passes)
    need = k // 2 + 1
    total = comb(n, k)
    return sum(comb(good, j) * comb(n - good, k - j) for j in range(need, k + 1)) / total


def _any(passes: list[bool], k: int) -> float:
    n, bad = len(passes), len(passes) - sum(passes)
    return 1.0 - comb(bad, k) / comb(n, k)


def headroom(paths: Sequence[str | Path], *, k: int = 3, reference: str | None = "single_shot") -> Headroom:
    """Pool the runs' answers per task and system; ``k`` answers per task for the sampling figures."""
    if k < 1:
        raise UserError("k must be at least 1")
    if not paths:
        raise UserError("give at least one run folder")
    if len({str(Path(p).resolve()) for p in paths}) < len(paths):
        raise UserError("the same run folder is given more than once")
    runs = [load_run(p) for p in paths]
    warnings = [
        f"{r.path}: {r.skipped_lines} line(s) are not task records and were left out" for r in runs if r.skipped_lines
    ]
    answers: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    run_count: dict[str, int] = defaultdict(int)
    for r in runs:
        if "," in r.system:
            raise UserError(f"{r.path} holds answers of several systems ({r.system}): give one system per folder")
        run_count[r.system] += 1
        for tid, rec in r.records.items():
            if rec.status == "unsupported":
                continue
            answers[r.system][tid].append(rec.passed)
    if reference is not None and reference not in answers:
        raise UserError(f"no run of the reference system {reference!r}: systems given are {', '.join(sorted(answers))}")
    systems = [_system(name, run_count[name], per_task, k) for name, per_task in sorted(answers.items())]
    if not any(s.tasks_k for s in systems):
        warnings.append(f"no system has {k} answers to one task: the k-figures are empty (lower k or give more runs)")
    tasks = set().union(*(set(t) for t in answers.values()))
    ever = {t for t in tasks if any(any(answers[s].get(t, [])) for s in answers)}
    ref_tasks = {t for t, v in answers[reference].items() if len(v) >= k} if reference is not None else set()
    return Headroom(
        k=k,
        reference=reference,
        runs=len(runs),
        tasks=len(tasks),
        answers=sum(len(v) for per in answers.values() for v in per.values()),
        systems=systems,
        ever_passed=_id_order(ever),
        never_passed=_id_order(tasks - ever),
        reference_tasks=len(ref_tasks),
        reference_ever=len(ref_tasks & ever),
        warnings=warnings,
    )


def _system(name: str, runs: int, per_task: dict[str, list[bool]], k: int) -> SystemHeadroom:
    sampled = [v for v in per_task.values() if len(v) >= k]
    return SystemHeadroom(
        system=name,
        runs=runs,
        tasks=len(per_task),
        answers=sum(len(v) for v in per_task.values()),
        tasks_k=len(sampled),
        p1=_mean_pct([sum(v) / len(v) for v in sampled]),
        majority_k=_mean_pct([_majority(v, k) for v in sampled]),
        any_k=_mean_pct([_any(v, k) for v in sampled]),
        ever=sum(any(v) for v in per_task.values()),
        never=sum(not any(v) for v in per_task.values()),
        always=sum(all(v) for v in per_task.values()),
        mixed=sum(0 < sum(v) < len(v) for v in per_task.values()),
    )


def _mean_pct(xs: list[float]) -> float | None:
    return round(100 * statistics.fmean(xs), 2) if xs else None


def to_report(h: Headroom, out_dir: Path | None = None) -> Report:
    table = ReportTable(
        title=f"Per system: p1, majority (maj) and any of {h.k} answers, % over the tasks with at least {h.k} of its answers",
        columns=[
            "system",
            "runs",
            "answers",
            "tasks",
            f"tasks >={h.k}",
            "p1",
            f"maj {h.k}",
            f"any {h.k}",
            "ever",
            "never",
            "always",
            "mixed",
        ],
        rows=[
            [
                s.system,
                s.runs,
                s.answers,
                s.tasks,
                s.tasks_k,
                _cell(s.p1),
                _cell(s.majority_k),
                _cell(s.any_k),
                s.ever,
                s.never,
                s.always,
                s.mixed,
            ]
            for s in h.systems
        ],
    )
    summary: dict[str, object] = {
        "runs": h.runs,
        "tasks": h.tasks,
        "answers scored": h.answers,
        "tasks some answer passes": f"{len(h.ever_passed)} ({_pct(len(h.ever_passed), h.tasks)}%)",
        "tasks every answer fails": f"{len(h.never_passed)} ({_pct(len(h.never_passed), h.tasks)}%)",
    }
    ref = next((s for s in h.systems if s.system == h.reference), None)
    if ref is not None and ref.p1 is not None and ref.majority_k is not None and ref.any_k is not None:
        ceiling = _pct(h.reference_ever, h.reference_tasks)
        summary[f"{ref.system}: tasks with >= {h.k} answers"] = h.reference_tasks
        summary[f"{ref.system}: p1 on them"] = f"{ref.p1}%"
        summary["some answer of any run passes, on them"] = f"{h.reference_ever} ({ceiling}%)"
        summary[f"headroom over {ref.system}: any answer of any run"] = f"{round(ceiling - ref.p1, 2)} points"
        summary[f"{ref.system}: majority of {h.k} - p1"] = f"{round(ref.majority_k - ref.p1, 2)} points"
        summary[f"{ref.system}: any of {h.k} - p1"] = f"{round(ref.any_k - ref.p1, 2)} points"
    never = ReportTable(
        title="Tasks every answer fails",
        columns=["count", "ids"],
        rows=[[len(h.never_passed), ", ".join(h.never_passed) or "-"]],
    )
    report = Report(
        name="Headroom over pooled BIRD-CRITIC runs",
        config={"k": h.k, "reference": h.reference},
        summary=summary,
        tables=[table, never],
        notes=[
            *h.warnings,
            "p1 is the mean over tasks of the share of the system's runs that pass, over tasks with at least k answers; "
            "'tasks some answer passes' is over every task any run holds, so it is the ceiling of choosing among "
            "every answer given.",
            f"majority of {h.k}: most of {h.k} answers pass (what voting on results can be counted on to give when "
            f"passing answers agree); any of {h.k}: a perfect choice among {h.k} answers.",
            "Runs of different days and code versions are pooled: the figures measure whoever answered them.",
        ],
    )
    if out_dir is not None and any(s.p1 is not None for s in h.systems):
        report.plots = [str(_plot(h, Path(out_dir) / f"{STEM}.png"))]
    return report


def _cell(v: float | None) -> float | str:
    return "-" if v is None else v


def _plot(h: Headroom, path: Path) -> Path:
    """Bars per system (p1, majority of k, any of k) and a line at the ceiling of all answers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [("p1", "p1"), (f"majority of {h.k}", "majority_k"), (f"any of {h.k}", "any_k")]
    width = 0.8 / len(kinds)
    shown = [s for s in h.systems if s.p1 is not None]
    fig, ax = plt.subplots(figsize=(max(6.5, 1.6 * len(shown)), 4.4))
    for j, (label, attr) in enumerate(kinds):
        xs = [i + (j - 1) * width for i in range(len(shown))]
        vals = [getattr(s, attr) for s in shown]
        ax.bar(xs, vals, width=width, label=label)
        for x, v in zip(xs, vals):
            ax.text(x, v + 1, f"{v:.0f}", ha="center", fontsize=7)
    if h.reference_tasks:
        ceiling, where = _pct(h.reference_ever, h.reference_tasks), f"of {h.reference}'s tasks"
    else:
        ceiling, where = _pct(len(h.ever_passed), h.tasks), "of all tasks"
    ax.axhline(
        ceiling, color="black", linestyle="--", linewidth=1, label=f"some answer passes ({ceiling:.0f}% {where})"
    )
    ax.set_xticks(range(len(shown)), [s.system[:24] for s in shown], fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of tasks")
    ax.set_title(f"Headroom: {h.answers} answers to {h.tasks} tasks from {h.runs} runs", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4)
    return save_figure(fig, path)


def write(h: Headroom, out_dir: str | Path) -> Report:
    """``headroom.json`` / ``headroom.md`` (the report), ``headroom.png`` and ``headroom_data.json`` (the model)."""
    return write_with_data(to_report(h, Path(out_dir)), h, out_dir, STEM)
