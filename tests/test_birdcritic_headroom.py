"""`actsagent birdcritic headroom`: pooled answers per task and system, on result files written as the runner writes them."""

from __future__ import annotations

import json
import random
from itertools import combinations
from pathlib import Path

import pytest
from typer.testing import CliRunner

from actsagent.birdcritic.headroom import _any, _majority, headroom
from actsagent.cli import app
from actsagent.cli._common import run_app
from actsagent.errors import UserError
from actsagent.reporting import ResultLog

# per system: one row per run, one pass flag per task 1..5 (task 5 fails everywhere)
TREE = [[1, 1, 1, 0, 0], [1, 0, 1, 0, 0], [1, 0, 0, 0, 0]]
SINGLE = [[1, 0, 0, 1, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]]


def _run(folder: Path, system: str, flags: list[int], extra: str = "") -> Path:
    log = ResultLog(folder / "results.jsonl", key="instance_id")
    for i, f in enumerate(flags, start=1):
        log.append(
            {
                "instance_id": i,
                "category": "Query",
                "system": system,
                "status": "passed" if f else "test_failed",
                "passed": bool(f),
            }
        )
    if extra:
        with (folder / "results.jsonl").open("a") as fh:
            fh.write(extra)
    return folder


@pytest.fixture()
def runs(tmp_path) -> list[Path]:
    out = [_run(tmp_path / f"day{n}" / "acts_tree", "acts:tree", f) for n, f in enumerate(TREE)]
    out += [_run(tmp_path / f"day{n}" / "single_shot", "single_shot", f) for n, f in enumerate(SINGLE)]
    return out


def test_figures_follow_the_pooled_answers(runs):
    h = headroom(runs, k=3)
    assert (h.runs, h.tasks, h.answers) == (6, 5, 30)
    tree, single = (next(s for s in h.systems if s.system == n) for n in ("acts:tree", "single_shot"))
    # tree per task: 3/3, 1/3, 2/3, 0, 0 -> p1 40%; majority of 3 passes on tasks 1 and 3; some answer on 1-3
    assert (tree.p1, tree.majority_k, tree.any_k) == (40.0, 40.0, 60.0)
    assert (tree.ever, tree.never, tree.always, tree.mixed) == (3, 2, 1, 2)
    # single-shot: task 1 always, task 4 once in three
    assert (single.p1, single.majority_k, single.any_k) == (pytest.approx(26.67), 20.0, 40.0)
    assert h.ever_passed == ["1", "2", "3", "4"] and h.never_passed == ["5"]
    assert (h.reference_tasks, h.reference_ever) == (5, 4)


def test_the_headroom_is_over_the_reference_tasks_only(runs, tmp_path):
    other = _run(tmp_path / "other", "baseline:x", [0, 0, 0, 0, 1, 1])  # passes task 5 and a task 6 nobody else has
    h = headroom([*runs, other])
    assert h.tasks == 6 and h.never_passed == []
    assert (h.reference_tasks, h.reference_ever) == (5, 5)  # task 6 is not in single-shot's share


def test_counting_matches_enumerating_the_subsets():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 8)
        flags = [rng.random() < 0.5 for _ in range(n)]
        for k in range(1, n + 1):
            subsets = list(combinations(flags, k))
            assert _majority(flags, k) == pytest.approx(sum(sum(s) > k / 2 for s in subsets) / len(subsets))
            assert _any(flags, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


def test_tasks_with_fewer_than_k_answers_leave_the_k_figures(runs, tmp_path):
    h = headroom([runs[0], runs[3]], k=2)
    assert all(s.tasks_k == 0 and s.p1 is None and s.any_k is None for s in h.systems)
    assert any("no system has 2 answers" in w for w in h.warnings)
    assert h.ever_passed == ["1", "2", "3", "4"]  # the ceiling still counts every answer


def test_cli_writes_report_plot_and_json(runs, tmp_path):
    out = tmp_path / "hr"
    res = CliRunner().invoke(app, ["birdcritic", "headroom", *map(str, runs), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "headroom over single_shot: any answer of any run: 53.33 points" in res.stdout  # 80% - 26.67%
    for name in ("headroom.json", "headroom.md", "headroom_data.json", "headroom.png"):
        assert (out / name).stat().st_size > 0
    assert "Tasks every answer fails" in (out / "headroom.md").read_text()
    res = CliRunner().invoke(app, ["birdcritic", "headroom", *map(str, runs), "--out", str(out), "--json", "--k", "2"])
    assert res.exit_code == 0 and json.loads(res.stdout)["k"] == 2


def test_bad_inputs_are_one_clear_error(runs, tmp_path):
    with pytest.raises(UserError, match="not a run folder"):
        headroom([runs[0], tmp_path / "nope"])
    with pytest.raises(UserError, match="more than once"):
        headroom([runs[0], runs[0]])
    with pytest.raises(UserError, match="reference system 'single_shot'"):
        headroom(runs[:3])
    mixed = _run(tmp_path / "mixed", "acts:tree", [1])
    _run(mixed, "single_shot", [0, 0])  # two systems in one folder: refused, not pooled under one name
    with pytest.raises(UserError, match="several systems"):
        headroom([*runs, mixed])
    # hostile lines are left out and counted; markup in a system name is printed as text
    odd = _run(tmp_path / "odd", "[b]x", [1, 1], extra='[1]\n{"instance_id": null}\nnot json\n')
    h = headroom([*runs, odd])
    assert any("2 line(s)" in w for w in h.warnings) and "[b]x" in {s.system for s in h.systems}
    res = CliRunner().invoke(app, ["birdcritic", "headroom", *map(str, runs), str(odd), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0 and "[b]x" in res.stdout


def test_cli_error_is_one_line_without_traceback(capsys, tmp_path):
    code = run_app(app, ["birdcritic", "headroom", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code != 0 and out == "" and err.count("\n") == 1 and "not a run folder" in err and "Traceback" not in err
