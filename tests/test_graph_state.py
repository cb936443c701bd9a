"""The tree graph's state is typed: checkpoints revive its models, and each tool completes its own input."""

from __future__ import annotations

import logging

import pytest

from actsagent.agent import repair
from actsagent.graphs.checkpoint import get_checkpointer
from actsagent.graphs.runtime import Runtime
from actsagent.graphs.state import TreeState
from actsagent.graphs.tree_graph import build_tree_graph
from actsagent.tools import TOOLS, PathContext, RunSqlOutput, SafeqlRefineOutput, ToolContext, ToolInputError


def test_a_checkpointed_run_is_revived_as_typed_models(pg_db, tmp_path, caplog):
    saver = get_checkpointer(tmp_path / "runs.sqlite")
    with caplog.at_level(logging.WARNING):
        run = repair(
            "names of customers from Germany",
            "SELECT nme FROM customers WHERE country = 'DE'",
            pg_db,
            thread_id="typed-1",
            checkpointer=saver,
        )
        graph = build_tree_graph(Runtime(ctx=ToolContext(db=pg_db)), saver)
        state = TreeState(**graph.get_state({"configurable": {"thread_id": "typed-1"}}).values)
    assert state.final is not None and state.final.status == run.status == "best_effort"
    probe, refine, leaf = state.tree.executed()
    assert isinstance(probe.output, RunSqlOutput) and not probe.output.ok
    assert isinstance(refine.output, SafeqlRefineOutput) and refine.output.status == "refined"
    assert leaf.verdict is not None and leaf.verdict.method == "execution_only"
    assert state.tree == run.tree and state.counters.nodes == 3
    # the checkpointer revives exactly the state's own classes: nothing is read back as an unknown type
    assert not [r for r in caplog.records if "unregistered type" in r.getMessage() or "Blocked" in r.getMessage()]


def _ctx(**kw) -> PathContext:
    base = {
        "intent": "count orders",
        "original_sql": ["CREATE TABLE t (a int)", "SELEC 1"],
        "working_sql": ["CREATE TABLE t (a int)", "SELEC 1"],
        "failing_statement": lambda sql: sql[1] if isinstance(sql, list) else sql,
    }
    return PathContext(**{**base, **kw})


def test_each_tool_completes_the_planners_input_from_the_path():
    assert TOOLS["run_sql"].resolve({}, _ctx()).sql == ["CREATE TABLE t (a int)", "SELEC 1"]
    assert TOOLS["safeql_refine"].resolve({}, _ctx()).sql == "SELEC 1"
    split = TOOLS["split_and_fix"].resolve({"sql": "SELECT 2"}, _ctx())
    assert split.sql == "SELECT 2" and split.intent == "count orders"
    gen = TOOLS["generate_sql"].resolve(
        {"instructions": "group by day"}, _ctx(has_model=False, newest_executable="SELECT 1", hypothesis="h")
    )
    assert gen.draft_sql == "SELECT 1" and gen.hypothesis == "h; group by day"
    with pytest.raises(ToolInputError, match="run_sql needs SQL"):
        TOOLS["run_sql"].resolve({}, _ctx(working_sql=None))
