"""Comparison variants on the same tools and tree record, for the benchmark.

* ``regenerate``: what most systems do: execute; on an error send it back and regenerate, at most
  ``budget.max_regenerations`` times. No planner, no judge, no branching.
* ``single_shot``: one LLM repair call, no tools; the answer is executed once for the record.

Both need a model; ``agent.repair`` runs the LLM-free tree fallback instead when there is none.
The result has the same shape as a tree run (a linear ``PlanTree``), so reports compare like with like.
They are plain functions; ``agent`` runs them as a one-task LangGraph graph (``graphs.runtime.call_events``),
so their ``rt.emit`` events reach consumers through the same custom stream as the tree's. A node's SQL is read
from its typed output (``GenerateSqlOutput``); ``node.input`` only records it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from actsagent.graphs.runtime import Runtime
from actsagent.graphs.state import Best, Failure, Final, TreeState, initial_state
from actsagent.graphs.tree import PlanNode, PlanTree
from actsagent.llm import StructuredOutputError
from actsagent.tools import GenerateSqlOutput, RunSqlInput, RunSqlOutput, run_sql
from actsagent.tools._schema_context import sql_list
from actsagent.tools._sqltext import is_statement_list, statements_text
from actsagent.tools.generate_sql import GeneratedSQL, _clean, write_directly


def run_regenerate(rt: Runtime, intent: str, sql: str | list[str] | None) -> TreeState:
    state = initial_state(intent, sql, "regenerate")
    tree = PlanTree()
    current: Any = sql
    parent: str | None = None
    last: RunSqlOutput | None = None
    history: list[dict[str, str]] = []
    for attempt in range(rt.budget.max_regenerations + 1):
        if attempt == 0 and current:
            node = _node(tree, parent, "run_sql", "run the SQL as given", sql=current)
            last = _timed(rt, state, tree, node, partial(run_sql, RunSqlInput(sql=current), rt.ctx))
        else:
            node = _node(tree, parent, "generate_sql", f"regenerate #{attempt} from the error")

            def regen(node: PlanNode = node) -> GenerateSqlOutput:  # bound now: called within this iteration
                nonlocal current
                resp = rt.ctx.complete(
                    "regenerate",
                    role="tools",
                    response_model=GeneratedSQL,
                    intent=intent,
                    original_sql=statements_text(sql),
                    history=history,
                    **rt.ctx.schema_vars(sql=sql_list(sql, current), intent=intent),
                    statement_list=is_statement_list(sql),
                )
                current = _clean(resp.parsed.sql)
                return _candidate_run(rt, node, current)

            last = _timed_candidate(rt, state, tree, node, regen)
        parent = node.id
        if last is not None:
            if last.ok:
                break
            history.append({"sql": statements_text(current), "error": last.summary()})
    return _done(state, tree)


def run_single_shot(rt: Runtime, intent: str, sql: str | list[str] | None) -> TreeState:
    state = initial_state(intent, sql, "single_shot")
    tree = PlanTree()
    node = _node(tree, None, "generate_sql", "one repair call, no tools")

    def once() -> GenerateSqlOutput:
        return _candidate_run(rt, node, _clean(write_directly(rt.ctx, intent, sql).sql))

    _timed_candidate(rt, state, tree, node, once)
    return _done(state, tree)


def run_draft(rt: Runtime, question: str, draft: str | list[str] | None) -> TreeState:
    """``ask``'s single-shot: the SQL written once from the question is the answer, run as written (a second
    model call would make it a two-shot baseline)."""
    state = initial_state(question, draft, "single_shot")
    tree = PlanTree()
    node = _node(tree, None, "generate_sql", "the SQL written from the question, run as written", sql=draft)
    if draft:
        _timed(rt, state, tree, node, lambda: _candidate_run(rt, node, draft))
    else:
        node.status, node.error = "failed", "the model wrote no SQL"
    return _done(state, tree)


def _candidate_run(rt: Runtime, node: PlanNode, sql: str | list[str]) -> GenerateSqlOutput:
    """A generated SQL and its execution: the candidate's typed output (as the tree's generate_sql gives it)."""
    node.input = {"sql": sql}  # the record of what ran; what is read is the typed output
    return GenerateSqlOutput(sql=sql, source="llm", execution=run_sql(RunSqlInput(sql=sql), rt.ctx))


def _node(tree: PlanTree, parent: str | None, tool: str, description: str, *, sql: Any = None) -> PlanNode:
    nid = tree.new_id()
    node = PlanNode(id=nid, parent=parent, tool=tool, description=description)  # type: ignore[arg-type]
    if sql:
        node.input = {"sql": sql}
    tree.nodes[nid] = node
    if parent is None:
        tree.root = nid
    else:
        tree.nodes[parent].children.append(nid)
    tree.cursor = nid
    return node


def _timed(
    rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, fn: Callable[[], RunSqlOutput | GenerateSqlOutput]
) -> RunSqlOutput:
    """Run ``fn`` as ``node`` (events, timing, usage); its typed output goes on the node, its execution is
    returned and makes the node a candidate."""
    rt.ctx.meter.start_window()
    state.counters.nodes += 1
    node.order = state.counters.nodes
    node.started_at = time.time()
    rt.emit("node_start", f"{node.tool}: {node.description}", node.id, tree=tree)
    t0 = time.perf_counter()
    try:
        out = fn()
        run = out.execution if isinstance(out, GenerateSqlOutput) else out
        node.output = out
        node.summary = run.summary()
        node.status = "done" if run.ok else "refuted"
        _candidate(state, node, run)
        return run
    finally:
        w = rt.ctx.meter.window
        node.ms = (time.perf_counter() - t0) * 1000
        node.llm_ms, node.llm_calls = w.llm_ms, w.llm_calls
        node.prompt_tokens, node.completion_tokens, node.cost_usd = w.prompt_tokens, w.completion_tokens, w.cost_usd
        state.counters.add(w)
        state.counters.wall_ms += node.ms
        rt.emit("node_end", f"{node.tool} {node.status}", node.id, tree=tree)


def _timed_candidate(
    rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, fn: Callable[[], GenerateSqlOutput]
) -> RunSqlOutput | None:
    """``_timed`` for a model's SQL: a malformed reply fails the node (recorded), and the run goes on."""
    try:
        return _timed(rt, state, tree, node, fn)
    except StructuredOutputError as e:
        node.status, node.error = "failed", str(e)[:800]
        state.failures.append(Failure.model_validate({"node": node.id, **e.summary()}))
        return None


def _candidate(state: TreeState, node: PlanNode, out: RunSqlOutput) -> None:
    cand = Best(node=node.id, ok=out.ok, empty=out.ok and out.last.empty)
    best = state.best
    if best is None or (cand.ok, not cand.empty) >= (best.ok, not best.empty):
        state.best = cand


def _done(state: TreeState, tree: PlanTree) -> TreeState:
    best = state.best
    state.final = Final(
        status="best_effort" if best and best.ok else "failed", node=best.node if best else None, reason="variant"
    )
    state.notes.append(f"{state.mode} variant: no judge; success means the SQL executes")
    tree.cursor = (best.node if best else None) or tree.cursor
    state.tree = tree
    return state
