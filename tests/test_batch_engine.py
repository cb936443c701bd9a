"""Batch engines without a cluster: partitions merge into the results log once per key, and the Ray flag
explains itself in one line when Ray is missing or misused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from actsagent import batch_engine
from actsagent.batch_engine import Engine, parse_engine, run_batch
from actsagent.errors import UserError
from actsagent.reporting import ResultLog


def test_merge_keeps_each_key_once_and_ignores_cut_lines(tmp_path):
    log = ResultLog(tmp_path / "v.jsonl")
    log.append({"id": "a", "n": 1})
    log.part("w0-11").append({"id": "a", "n": 2})  # done before the driver died: the log's copy stays
    log.part("w0-11").append({"id": "b", "n": 1})
    log.part("w1-12").append({"id": "b", "n": 2})  # a batch retried after its worker died
    log.part("w1-12").append({"id": "c", "n": 1})
    with (log.parts_dir / "w1-12.jsonl").open("a") as f:
        f.write('{"id": "d", "n"')  # the worker was killed mid-line: d is redone
    assert log.merge_parts() == 2
    assert [(r["id"], r["n"]) for r in log.records()] == [("a", 1), ("b", 1), ("c", 1)]
    assert not log.parts_dir.exists()
    assert log.merge_parts() == 0  # nothing left: a second merge changes nothing
    assert len(log.records()) == 3


def test_merge_killed_midway_is_finished_by_the_next_merge(tmp_path):
    log = ResultLog(tmp_path / "v.jsonl")
    log.part("w0-1").append({"id": "a"})
    log.part("w0-1").append({"id": "b"})
    log.append({"id": "a"})  # the merge appended a and was killed before b and before dropping the partition
    assert log.merge_parts() == 1
    assert sorted(r["id"] for r in log.records()) == ["a", "b"]


def test_ray_batches_give_every_actor_work_and_stay_within_the_batch_size():
    def sizes(n: int, workers: int) -> list[int]:
        return [len(b) for b in batch_engine._batches(list(range(n)), Engine(name="ray", workers=workers))]

    assert sizes(5, 2) == [2, 2, 1]  # not one batch of 5 on one actor while the other idles
    assert sizes(24, 2) == [6, 6, 6, 6]
    assert sizes(300, 2) == [8] * 37 + [4]  # a big job: batches of engine.batch
    assert sizes(3, 8) == [1, 1, 1]
    assert sizes(0, 2) == []
    assert [x for b in batch_engine._batches(list(range(300)), Engine(name="ray")) for x in b] == list(range(300))


def test_a_ray_job_with_nothing_left_merges_what_a_killed_run_left_and_joins_no_cluster(tmp_path, monkeypatch):
    def no_cluster():
        raise AssertionError("a job with nothing to do started or joined a Ray cluster")

    monkeypatch.setattr(batch_engine, "_ray", no_cluster)
    log = ResultLog(tmp_path / "v.jsonl")
    log.part("clean-0-11").append({"id": "a"})
    assert list(run_batch(dict, [], log, engine=Engine(name="ray"), name="clean")) == []
    assert [r["id"] for r in log.records()] == ["a"] and not log.parts_dir.exists()


def test_engine_flags_say_what_is_wrong_in_one_line():
    with pytest.raises(UserError, match="--engine must be local or ray"):
        parse_engine("spark", workers=2)
    with pytest.raises(UserError, match="use it with --engine ray"):
        parse_engine("local", workers=2, address="auto")
    with pytest.raises(UserError, match="needs --engine ray"):
        parse_engine("local", workers=64)
    assert parse_engine("local", workers=2).name == "local"


def test_without_ray_the_flag_says_what_to_install(tmp_path):
    src = tmp_path / "pairs.jsonl"
    src.write_text(json.dumps({"question": "q", "sql": "SELECT 1", "db": str(tmp_path / "x.sqlite")}) + "\n")
    hide_ray = "import sys; sys.modules['ray'] = None; from actsagent.cli import main; main()"
    args = ["clean", str(src), "--out", str(tmp_path / "v.jsonl"), "--no-llm"]
    proc = subprocess.run(
        [sys.executable, "-c", hide_ray, *args, "--engine", "ray"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: --engine ray needs Ray, which is not installed: pip install 'actsagent[ray]'"
    ]
    assert not (tmp_path / "v.jsonl").exists()
    local = subprocess.run([sys.executable, "-c", hide_ray, *args], capture_output=True, text=True, timeout=120)
    assert local.returncode == 0, local.stderr  # the local engine needs no Ray
    assert json.loads((tmp_path / "v.jsonl").read_text())["verdict"] == "rejected"  # the database is missing
