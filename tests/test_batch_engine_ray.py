"""The Ray engine on a real local Ray cluster (2 CPUs, started here) and the embedded PostgreSQL.

The same 300 Spider pairs get the same verdicts from both engines; a worker killed mid-run and then the
driver killed, a rerun gives every pair exactly once and keeps what the first run finished; BIRD-CRITIC
tasks score the same on Ray as in the reference run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from actsagent.batch_engine import Engine
from actsagent.benchmarks import spider_pairs
from actsagent.clean import clean_file
from actsagent.reporting import ResultLog

ray = pytest.importorskip("ray", reason="the Ray engine's tests need the extra actsagent[ray]")

SYSTEM = "DAIL-SQL_GPT-4"  # real model-written SQL for Spider dev: mostly right, some repairable, some not


@pytest.fixture(scope="module")
def ray_address():
    ctx = ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ctx.address_info["gcs_address"]
    ray.shutdown()


def _spider_pairs(path: Path, n: int, *, on_postgres: bool) -> list[str]:
    rows = spider_pairs(SYSTEM, n, on_postgres=on_postgres)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [str(r["id"]) for r in rows]


def _verdicts(path: Path) -> dict[str, tuple]:
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(recs) == len({str(r["id"]) for r in recs})  # each pair once
    return {str(r["id"]): (r["verdict"], r["repaired_sql"], r["reason"], r["method"]) for r in recs}


def test_300_spider_pairs_get_the_same_verdicts_on_both_engines(tmp_path, ray_address):
    src = tmp_path / "pairs.jsonl"
    ids = _spider_pairs(src, 300, on_postgres=False)
    with ThreadPoolExecutor(1) as pool:  # the Ray run's driver only waits on its actors: the local run goes meanwhile
        ray_run = pool.submit(
            clean_file, src, tmp_path / "ray" / "v.jsonl", engine=Engine(name="ray", workers=2), progress=False
        )
        local = clean_file(src, tmp_path / "local" / "v.jsonl", workers=2, progress=False)
        on_ray = ray_run.result()
    a, b = _verdicts(tmp_path / "local" / "v.jsonl"), _verdicts(tmp_path / "ray" / "v.jsonl")
    assert sorted(a) == sorted(ids) and sorted(b) == sorted(ids)
    assert {k: (a[k], b[k]) for k in ids if a[k] != b[k]} == {}  # the pairs whose verdicts differ, if any
    assert {v[0] for v in a.values()} == {"kept", "repaired", "rejected"}  # every kind of verdict is compared
    keys = ("pairs", "kept", "repaired", "rejected", "usable_after_cleaning_pct")
    assert {k: local.summary[k] for k in keys} == {k: on_ray.summary[k] for k in keys}
    assert on_ray.config["engine"] == "ray" and local.config["engine"] == "local"
    assert not ResultLog(tmp_path / "ray" / "v.jsonl").parts_dir.exists()  # merged, partitions gone
    assert (tmp_path / "ray" / "v_summary.md").exists()


def _part_records(log: ResultLog) -> list[dict]:
    parts = sorted(log.parts_dir.glob("*.jsonl")) if log.parts_dir.is_dir() else []
    return [r for p in parts for r in ResultLog(p).records()]


def _wait_for(child: subprocess.Popen, log: ResultLog, n: int, timeout_s: float = 240) -> None:
    """Until the partitions hold ``n`` distinct pairs (a retried batch writes some twice)."""
    deadline = time.monotonic() + timeout_s
    while len(done := {r["id"] for r in _part_records(log)}) < n:
        assert child.poll() is None, child.stderr.read().decode()[-2000:] if child.stderr else ""
        assert time.monotonic() < deadline, f"only {len(done)} of {n} pairs after {timeout_s}s"
        time.sleep(0.1)


def test_killed_worker_and_killed_driver_then_a_rerun_give_every_pair_once(tmp_path, ray_address):
    src = tmp_path / "pairs.jsonl"
    ids = _spider_pairs(src, 24, on_postgres=True)  # on PostgreSQL most need a SafeQL search: seconds each
    out = tmp_path / "v.jsonl"
    log = ResultLog(out)
    cli = "from actsagent.cli import main; main()"
    args = ["clean", str(src), "--out", str(out), "--no-llm", "--engine", "ray", "--address", ray_address]
    child = subprocess.Popen([sys.executable, "-c", cli, *args, "--workers", "2"], stderr=subprocess.PIPE)
    try:
        _wait_for(child, log, 2)
        victim = sorted(log.parts_dir.glob("*.jsonl"))[0]
        os.kill(int(victim.stem.rsplit("-", 1)[1]), signal.SIGKILL)  # a worker process (pid in the file name)
        _wait_for(child, log, 8)  # its actor is restarted and the driver goes on
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    first: dict[str, list[dict]] = {}
    for r in _part_records(log):
        first.setdefault(str(r["id"]), []).append(r)
    assert 8 <= len(first) < len(ids) and not out.exists()  # the driver died before merging
    clean_file(src, out, engine=Engine(name="ray", workers=2), progress=False)
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(str(r["id"]) for r in recs) == sorted(ids)  # every pair exactly once
    for r in recs:  # what the first run finished was kept as it was, not redone
        if str(r["id"]) in first:
            assert r in first[str(r["id"])]
    assert not log.parts_dir.exists()


def test_birdcritic_tasks_score_the_same_on_ray(tmp_path, ray_address):
    from actsagent.birdcritic.runner import run_benchmark
    from actsagent.birdcritic.systems import IssueSqlSystem

    ids = ["0", "1", "2", "6", "10"]
    engine = Engine(name="ray", workers=2)
    report = run_benchmark("flash", IssueSqlSystem(), tmp_path, ids=ids, engine=engine, progress=False)
    recs = {str(r["instance_id"]): r for r in ResultLog(tmp_path / "results.jsonl").records()}
    assert sorted(recs) == sorted(ids)
    assert {i for i in ids if recs[i]["passed"]} == {"6", "10"}  # the reference run's outcome (local engine test)
    assert report.summary["passed"] == 2 and report.config["engine"] == "ray"
