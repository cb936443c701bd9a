"""`actsagent birdcritic compare` on small real run outputs (issue_sql and an official baseline, scored here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from actsagent.birdcritic.compare import compare, load_run
from actsagent.birdcritic.runner import run_benchmark
from actsagent.birdcritic.systems import BaselineSystem, IssueSqlSystem
from actsagent.cli import app
from actsagent.errors import UserError

IDS = ["1", "6", "10", "15", "81", "85"]
BASELINE = "claude-opus-4.6"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, pg_admin_url) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    out = {"issue": base / "issue_sql", "opus": base / "opus", "opus_more": base / "opus_more"}
    run_benchmark("flash", IssueSqlSystem(), out["issue"], ids=IDS, workers=2, progress=False)
    run_benchmark("flash", BaselineSystem(BASELINE, "flash"), out["opus"], ids=IDS, workers=2, progress=False)
    shutil.copytree(out["opus"], out["opus_more"])  # the same run, then two more tasks: a different task set
    run_benchmark(
        "flash", BaselineSystem(BASELINE, "flash"), out["opus_more"], ids=[*IDS, "0", "2"], workers=2, progress=False
    )
    return out


def _passed(folder: Path) -> set[str]:
    lines = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
    return {str(r["instance_id"]) for r in lines if r["passed"]}


def test_figures_and_pairwise_wins_follow_the_results(runs):
    cmp = compare([runs["issue"], runs["opus"]])
    assert cmp.tasks_compared == len(IDS) and sorted(cmp.task_ids, key=int) == sorted(IDS, key=int)
    assert cmp.warnings == []
    issue, opus = cmp.runs
    assert (issue.label, issue.system) == ("issue_sql", "issue_sql")
    assert opus.system == f"baseline:{BASELINE}"
    pi, po = _passed(runs["issue"]), _passed(runs["opus"])
    assert {"6", "10"} <= pi  # the reference run (checks/) passes issue_sql on these two
    assert issue.passed == len(pi) and opus.passed == len(po)
    assert issue.accuracy == round(100 * len(pi) / len(IDS), 2)
    assert sum(n for _, n in opus.by_category.values()) == len(IDS)
    assert sum(p for p, _ in opus.by_category.values()) == len(po)
    (pair,) = cmp.pairs
    assert set(pair.a_wins) == pi - po and set(pair.b_wins) == po - pi
    assert pair.a_wins or pair.b_wins  # the two runs do differ on these tasks
    assert set(cmp.any_passed) == pi | po  # what a perfect choice between the two runs would pass
    assert issue.llm_calls == 0 and issue.median_s_per_task > 0


def test_different_task_sets_are_compared_on_the_shared_tasks_with_a_warning(runs):
    cmp = compare([runs["opus"], runs["opus_more"], runs["issue"]])
    assert cmp.tasks_compared == len(IDS)
    assert cmp.only_in == {"opus": 0, "opus_more": 2, "issue_sql": 0}
    assert any("different task sets" in w and "opus_more: 2 more" in w for w in cmp.warnings)
    same = next(p for p in cmp.pairs if {p.a, p.b} == {"opus", "opus_more"})
    assert same.a_wins == [] and same.b_wins == []  # identical on the shared tasks
    assert len(cmp.pairs) == 3


def test_cli_prints_writes_report_and_plot(runs, tmp_path):
    cli = CliRunner()
    out = tmp_path / "cmp"
    res = cli.invoke(
        app, ["birdcritic", "compare", str(runs["issue"]), str(runs["opus_more"]), "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["tasks_compared"] == len(IDS) and [r["label"] for r in data["runs"]] == ["issue_sql", "opus_more"]
    assert "different task sets" in res.stderr
    for name in ("compare.json", "compare.md", "compare_data.json", "compare_by_category.png"):
        assert (out / name).stat().st_size > 0
    md = (out / "compare.md").read_text()
    assert "Passed by category" in md and "Pairwise" in md and "compare_by_category.png" in md
    res = cli.invoke(app, ["birdcritic", "compare", str(runs["issue"]), str(runs["opus"]), "--out", str(out)])
    assert res.exit_code == 0 and "Overall" in res.stdout and "median s / task" in res.stdout


def test_bad_inputs_are_one_clear_error(runs, tmp_path):
    with pytest.raises(UserError, match="at least two"):
        compare([runs["issue"]])
    with pytest.raises(UserError, match="not a run folder"):
        compare([runs["issue"], tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"no results\.jsonl"):
        compare([runs["issue"], tmp_path / "empty"])
    with pytest.raises(UserError, match="more than once"):
        compare([runs["issue"], runs["issue"]])
    # hostile lines: not JSON objects, ids of the wrong type, negative counts; markup in a folder name
    odd = tmp_path / "[bold]odd"
    odd.mkdir()
    good = (runs["issue"] / "results.jsonl").read_text()
    (odd / "results.jsonl").write_text(
        good + '[1, 2]\n{"instance_id": null}\n{"instance_id": {"a": 1}}\n'
        '{"instance_id": "x", "tokens": -5}\nnot json\n'
    )
    run = load_run(odd)
    assert run.skipped_lines == 4 and len(run.records) == len(IDS)
    res = CliRunner().invoke(
        app, ["birdcritic", "compare", str(runs["issue"]), str(odd), "--out", str(tmp_path / "c2")]
    )
    assert res.exit_code == 0, res.output
    assert "[bold]odd" in res.stdout and "4 line(s)" in res.stderr
