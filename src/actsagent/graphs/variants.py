"""Comparison variants on the same tools and tree record, for the benchmark.

* ``regenerate``: what most systems do: execute; on an error send it back and regenerate, at most
  ``budget.max_regenerations`` times. No planner, no judge, no branching.
* ``single_shot``: one LLM repair call, no tools; the answer is executed once for the record.

Both need a model; ``agent.repair`` runs the LLM-free tree fallback instead when there is none.
The result has the same shape as a tree run (a linear ``PlanTree``), so reports compare like with like.
"""

from __future__ import annotations

import time
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
            node = _node(tree, parent, "run_sql", "run the SQL as given")
            last = _timed(rt, state, tree, node, lambda: run_sql(RunSqlInput(sql=current), rt.ctx))
        else:
            node = _node(tree, parent, "generate_sql", f"regenerate #{attempt} from the error")

            def regen(node: PlanNode = node) -> RunSqlOutput:  # bound now: called within this iteration
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
                node.input = {"sql": current}
                return run_sql(RunSqlInput(sql=current), rt.ctx)

            try:
                last = _timed(rt, state, tree, node, regen)
            except StructuredOutputError as e:
                node.status, node.error = "failed", str(e)[:800]
                state.failures.append(Failure.model_validate({"node": node.id, **e.summary()}))
                last = None
        parent = node.id
        if last is not None:
            _candidate(state, node, current, last)
            if last.ok:
                break
            history.append({"sql": statements_text(current), "error": last.summary()})
    return _done(state, tree)


def run_single_shot(rt: Runtime, intent: str, sql: str | list[str] | None) -> TreeState:
    state = initial_state(intent, sql, "single_shot")
    tree = PlanTree()
    node = _node(tree, None, "generate_sql", "one repair call, no tools")

    def once() -> RunSqlOutput:
        node.input = {"sql": _clean(write_directly(rt.ctx, intent, sql).sql)}
        return run_sql(RunSqlInput(sql=node.input["sql"]), rt.ctx)

    try:
        out = _timed(rt, state, tree, node, once)
        _candidate(state, node, node.input["sql"], out)
    except StructuredOutputError as e:
        node.status, node.error = "failed", str(e)[:800]
        state.failures.append(Failure.model_validate({"node": node.id, **e.summary()}))
    return _done(state, tree)


def run_draft(rt: Runtime, question: str, draft: str | list[str] | None) -> TreeState:
    """``ask``'s single-shot: the SQL written once from the question is the answer, run as written (a second
    model call would make it a two-shot baseline)."""
    state = initial_state(question, draft, "single_shot")
    tree = PlanTree()
    node = _node(tree, None, "generate_sql", "the SQL written from the question, run as written")
    if draft:
        node.input = {"sql": draft}
        out = _timed(rt, state, tree, node, lambda: run_sql(RunSqlInput(sql=draft), rt.ctx))
        _candidate(state, node, draft, out)
    else:
        node.status, node.error = "failed", "the model wrote no SQL"
    return _done(state, tree)


def _node(tree: PlanTree, parent: str | None, tool: str, description: str) -> PlanNode:
    nid = tree.new_id()
    node = PlanNode(id=nid, parent=parent, tool=tool, description=description)  # type: ignore[arg-type]
    tree.nodes[nid] = node
    if parent is None:
        tree.root = nid
    else:
        tree.nodes[parent].children.append(nid)
    tree.cursor = nid
    return node


def _timed(rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, fn) -> RunSqlOutput:
    rt.ctx.meter.start_window()
    state.counters.nodes += 1
    node.order = state.counters.nodes
    node.started_at = time.time()
    rt.emit("node_start", f"{node.tool}: {node.description}", node.id, tree=tree)
    t0 = time.perf_counter()
    try:
        out = fn()
        # a regenerated SQL is a candidate: its output is generate_sql's, with the execution inside
        is_candidate = node.tool == "generate_sql"
        node.output = GenerateSqlOutput(sql=node.input["sql"], source="llm", execution=out) if is_candidate else out
        node.summary = out.summary()
        node.status = "done" if out.ok else "refuted"
        return out
    finally:
        w = rt.ctx.meter.window
        node.ms = (time.perf_counter() - t0) * 1000
        node.llm_ms, node.llm_calls = w.llm_ms, w.llm_calls
        node.prompt_tokens, node.completion_tokens, node.cost_usd = w.prompt_tokens, w.completion_tokens, w.cost_usd
        state.counters.add(w)
        state.counters.wall_ms += node.ms
        rt.emit("node_end", f"{node.tool} {node.status}", node.id, tree=tree)


def _candidate(state: TreeState, node: PlanNode, sql: Any, out: RunSqlOutput) -> None:
    if not node.input.get("sql"):
        node.input = {"sql": sql}
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
