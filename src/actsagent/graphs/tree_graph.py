"""The tree-structured debugging graph (ACTS-SQL Algorithm 1) as a LangGraph ``StateGraph``.

    plan ──> execute ──> advance ──> execute ... ──> END
                 └──> clarify (interactive pause) ──> execute

Each step returns a LangGraph ``Command``: the whole typed state (``graphs.state.TreeState``) as its update
and the next step as ``goto``. Tools are known only through ``TOOLS``: a node's input is completed by its
``ToolSpec``, and its typed output says what SQL it produced.

* ``plan``: checks are written from the intent before any candidate exists (``write_checks``) and
  run on the original SQL; the planner writes the revision-plan tree (JSON) from the intent,
  schema, faulty SQL and its result; without a model a deterministic fallback plan is used.
* ``execute``: runs the cursor node's tool and records input, output, timing and tokens on the
  node. ``detect_ambiguities`` expands the node with one branch per interpretation; a
  ``generate_sql`` leaf's candidate is executed, verified by the checks in disposable copies, and
  judged: alone, or against earlier candidates on the rows where their results differ.
* ``advance``: accept a verified candidate; a candidate the judge approves without confirmation
  gets a sibling written the other way to compare with (a minimal edit gets a direct rewrite, a
  direct rewrite a minimal edit); otherwise roll back bottom-up to the nearest node
  with unexplored children (the planner may add new ones); where several children are pending the
  planner selects one from the evidence; budgets end the run with the best candidate so far.

Model failures (malformed replies, bad tool inputs, failing SQL) are stored on nodes and in
``model_failures`` and drive backtracking; provider outages and actsagent bugs propagate (the
checkpoint keeps every completed step, so the run can resume). ``mode="linear"`` is the paper's
ablation on the same machinery: one path, no branching, no rollback.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, StateGraph
from langgraph.types import Command, interrupt
from pydantic import ValidationError

from actsagent.graphs.candidates import (
    CandidateRecord,
    Candidates,
    alternatives,
    confirming_checks,
    doubted_checks,
    outvoting,
    plain_rewrite,
)
from actsagent.graphs.models import Budget, Clarification, PlannerReply
from actsagent.graphs.runtime import Runtime
from actsagent.graphs.state import Best, Decision, Failure, Final, FinalStatus, Refuted, TreeState
from actsagent.graphs.tree import NodeSpec, NodeStatus, PlanNode, PlanTree
from actsagent.llm import StructuredOutputError
from actsagent.tools import (
    TOOLS,
    DetectAmbiguitiesOutput,
    GenerateSqlOutput,
    JudgeInput,
    NoModelError,
    PathContext,
    RunSqlInput,
    ToolInputError,
    Verdict,
    judge,
    run_sql,
)
from actsagent.tools._schema_context import sql_list
from actsagent.tools._sqltext import statements_text
from actsagent.tools.checks import CheckPlan, WriteChecksInput, write_checks
from actsagent.tools.compare import CompareInput, Contender, agree, compare_candidates
from actsagent.tools.verify import Verification, VerifyInput, check_lines, verify

# failures of the model (stored, drive backtracking); anything else is a bug and propagates
_MODEL_FAULTS = (StructuredOutputError, ToolInputError, NoModelError)

__all__ = ["build_tree_graph", "fallback_plan"]

# a step reads the state, changes it and names the next step
Step = Callable[[Runtime, TreeState], str]


# ---------------------------------------------------------------------------------------------------
# the graph


def build_tree_graph(rt: Runtime, checkpointer: Any = None) -> Any:
    """Compile the graph for one run; ``rt`` carries the live database, model and event sink."""
    g = StateGraph(TreeState)
    g.add_node("plan", _step(rt, _plan), destinations=("execute",))
    g.add_node("execute", _step(rt, _execute), destinations=("advance", "clarify"))
    g.add_node("advance", _step(rt, _advance), destinations=("execute", END))
    g.add_node("clarify", _step(rt, _clarify, metered=False), destinations=("execute",))
    g.set_entry_point("plan")
    return g.compile(checkpointer=checkpointer)


def _step(rt: Runtime, fn: Step, *, metered: bool = True) -> Any:
    """Wrap a step: meter LLM usage and wall time into the checkpointed counters, and route to the step it names.

    The step works on a deep copy: the checkpointer may still be writing the previous step's values."""

    def run(state: TreeState) -> Command:
        state = state.model_copy(deep=True)
        rt.ctx.meter.start_window()
        t0 = time.perf_counter()
        goto = fn(rt, state)
        if metered:
            state.counters.add(rt.ctx.meter.window)
            state.counters.wall_ms += (time.perf_counter() - t0) * 1000
        return Command(update=state.updates(), goto=goto)

    return run


def _save_candidates(state: TreeState, cands: Candidates) -> None:
    state.candidates = cands
    best = cands.best()
    state.best = Best(node=best.node, ok=best.executes) if best else None


# ---------------------------------------------------------------------------------------------------
# plan


def _plan(rt: Runtime, state: TreeState) -> str:
    sql = state.original_sql
    if sql:
        t0 = time.perf_counter()
        first = run_sql(RunSqlInput(sql=sql), rt.ctx)
        state.counters.probe_ms = (time.perf_counter() - t0) * 1000
        state.original_result = first.summary()
        first_error = first.error
        first_empty = first.ok and (first.last.empty or first.last.vacuous)
    else:
        state.original_result = "(no SQL given: write it from the intent)"
        first_error, first_empty = None, False
    tree = PlanTree()
    if rt.model is not None:
        _write_checks(rt, state)
    judged_first = _verified_first(rt, state, first_error, first_empty)
    if judged_first is not None:
        tree.add_spec(judged_first, None)
        tree.cursor = tree.root
        state.verify_first = True
        state.notes.append(f"{judged_first.description}: the planner plans only if the judge does not approve it")
    elif (reply := _ask_planner(rt, state, tree, "initial") if rt.model is not None else None) and reply.plan:
        idmap: dict[str, str] = {}
        tree.add_spec(reply.plan, None, linear=state.mode == "linear", idmap=idmap)
        cursor = idmap.get(reply.cursor or "", tree.root)
        tree.cursor = cursor if cursor in tree.nodes else tree.root
        _decide(state, "initial", reply, rt)
    else:
        if rt.model is not None:
            state.notes.append("the planner gave no usable plan; ran the deterministic fallback plan")
        tree.add_spec(fallback_plan(sql, first_error, first_empty), None)
        tree.cursor = tree.root
    state.tree = tree
    text = tree.render_text()
    if state.checks is not None:
        text += "\n" + "\n".join(check_lines(state.checks, state.original_check))
    rt.emit("plan", "revision plan", tree=tree, text=text)
    return "execute"


def _verified_first(rt: Runtime, state: TreeState, first_error: Any, first_empty: bool) -> NodeSpec | None:
    """The candidate judged before any plan, or None: the planner plans first (ACTS-SQL's Algorithm 1).

    ask's own first draft, when it runs with rows, is judged as written (on the hard ask draw the tree revised
    right drafts into wrong ones); in mode ``escalate`` the direct rewrite from the request (the single-shot
    request) is judged first. Either way the planner's tree is for what the checks and the judge refute.
    Interactive runs plan first, so an ambiguous request can be put to the person."""
    if rt.model is None or rt.interactive:
        return None
    if state.first_draft:
        if first_error is not None or first_empty:
            return None
        return NodeSpec(
            description="judge the first draft as written",
            tool="generate_sql",
            input={"use_llm": False, "sql": state.original_sql},
        )
    if state.mode != "escalate":
        return None
    return NodeSpec(
        description="direct rewrite from the request, judged before any plan",
        tool="generate_sql",
        input={"strategy": "rewrite"},
    )


def _write_checks(rt: Runtime, state: TreeState) -> None:
    """Checks from the intent before any candidate; then the original SQL runs through them (which of them
    it fails shows the bug, and a fix is confirmed only by a check the original fails)."""
    try:
        plan = write_checks(WriteChecksInput(intent=state.intent, original_sql=state.original_sql), rt.ctx)
    except _MODEL_FAULTS as e:
        state.failures.append(_failure(e, phase="checks"))
        state.notes.append("no checks could be written from the request: candidates are judged without them")
        return
    state.checks = plan
    if state.original_sql:
        t0 = time.perf_counter()
        ver = verify(VerifyInput(sql=state.original_sql, checks=plan), rt.ctx)
        state.counters.checks_ms = (time.perf_counter() - t0) * 1000
        state.original_check = ver
    rt.emit("note", "checks: " + plan.summary())


def fallback_plan(sql: str | list[str] | None, error: Any, empty: bool) -> NodeSpec:
    """The LLM-free plan: run; SafeQL refinement on execution errors or empty results; clause
    localisation on syntax errors; the leaf takes the newest executable SQL the path produced."""
    leaf = NodeSpec(description="take the best SQL the evidence produced and run it", tool="generate_sql")
    if not sql:
        return leaf
    chain: list[NodeSpec] = []
    if error is not None and (
        error.error_class.value == "syntax" or (error.engine == "guard" and error.code == "parse")
    ):
        chain.append(NodeSpec(description="localise the failing clause", tool="split_and_fix"))
    if error is not None or empty:
        chain.append(NodeSpec(description="search small AST edits until the query runs", tool="safeql_refine"))
    chain.append(leaf)
    for parent, child in zip(reversed(chain[:-1]), reversed(chain[1:]), strict=True):
        parent.children = [child]
    return NodeSpec(description="run the SQL as given", tool="run_sql", children=[chain[0]])


# ---------------------------------------------------------------------------------------------------
# execute


def _execute(rt: Runtime, state: TreeState) -> str:
    tree = state.tree
    node = tree.nodes[tree.cursor or ""]
    state.counters.nodes += 1
    node.order = state.counters.nodes
    node.started_at = time.time()
    rt.emit("node_start", f"{node.tool}: {node.description}", node.id, tree=tree)
    t0 = time.perf_counter()
    spec = TOOLS[node.tool]
    try:
        try:
            inp = spec.resolve(node.input, _path_context(rt, state, tree, node))
        except ValidationError as e:  # the planner wrote an input the tool cannot take
            raise ToolInputError(_fault_text(e)) from e
        node.resolved_input = inp.model_dump(mode="json")
        out = spec.fn(inp, rt.ctx)
        node.output = out
        node.summary = out.summary()
        node.status = "done"
        if isinstance(out, DetectAmbiguitiesOutput):
            _expand(rt, state, tree, node, out)
        if isinstance(out, GenerateSqlOutput):
            _judge_candidate(rt, state, tree, node, out)
    except _MODEL_FAULTS as e:
        node.status = "failed"
        node.error = _fault_text(e)
        state.failures.append(_failure(e, node=node.id, tool=node.tool))
    w = rt.ctx.meter.window
    node.ms = (time.perf_counter() - t0) * 1000
    node.llm_ms, node.llm_calls = w.llm_ms, w.llm_calls
    node.prompt_tokens, node.completion_tokens, node.cost_usd = w.prompt_tokens, w.completion_tokens, w.cost_usd
    rt.emit("node_end", f"{node.tool} {node.status}", node.id, tree=tree)
    if state.pending is not None:
        rt.emit("clarify", state.pending.question, node.id, **state.pending.model_dump(exclude={"node_id"}))
        return "clarify"
    return "advance"


def _path_context(rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode) -> PathContext:
    """What the run knows at ``node``: its tool's ``ToolSpec`` completes the planner's partial input from it."""
    return PathContext(
        intent=state.intent,
        original_sql=state.original_sql,
        working_sql=_working_sql(tree, node, state.original_sql),
        failing_statement=lambda sql: _failing_statement(tree, node, sql),
        newest_executable=_newest_executable(tree, node),
        has_model=rt.model is not None,
        hypothesis=tree.hypothesis_of(node.id),
        evidence=_evidence(tree, node),
        feedback="\n".join(f"- {r.sql}: {r.why}" for r in state.refuted[-4:]),
    )


def _working_sql(tree: PlanTree, node: PlanNode, original: Any) -> Any:
    """The newest SQL produced on the path (candidate, clause repair, refinement), else the original."""
    found = original
    for n in tree.path(node.id)[:-1]:
        sql = n.output.produced_sql() if n.output is not None else None
        if sql is not None and n.status in ("done", "refuted", "accepted", "unconfirmed"):
            found = sql
    return found


def _newest_executable(tree: PlanTree, node: PlanNode) -> Any:
    """Without a model, the leaf takes the newest SQL on the path that is known to execute."""
    found = None
    for n in tree.path(node.id)[:-1]:
        sql = n.output.executable_sql() if n.output is not None else None
        if sql is not None:
            found = sql
    return found


def _failing_statement(tree: PlanTree, node: PlanNode, working: Any) -> Any:
    """For a statement list, the statement that failed in the newest execution on the path."""
    if not isinstance(working, list):
        return working
    for n in reversed(tree.path(node.id)[:-1]):
        bad = next((s.sql for s in n.output.executed() if not s.ok), None) if n.output is not None else None
        if bad:
            return bad
    return working[0] if working else None


def _evidence(tree: PlanTree, node: PlanNode) -> list[str]:
    lines = []
    for n in tree.path(node.id)[:-1]:
        if n.hypothesis:
            lines.append(f"[{n.id}] hypothesis: {n.hypothesis}")
        if n.executed:
            lines.append(f"[{n.id}] {n.tool} ({n.description}): {n.error or n.summary}"[:2500])
    return lines


def _expand(rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, out: DetectAmbiguitiesOutput) -> None:
    """One child branch per interpretation of the first ambiguity; planned follow-ups are copied under each."""
    if not out.ambiguities:
        return
    amb = out.ambiguities[0]
    planned = [_without_drafts(s) for s in tree.detach_children(node.id)]
    template = planned or [NodeSpec(description="write the SQL under this reading", tool="generate_sql")]
    interps = amb.interpretations[:1] if state.mode == "linear" else amb.interpretations
    for i, interp in enumerate(interps, 1):
        branch = NodeSpec(
            description=f"reading {i} of {amb.phrase!r}: {interp.description}"[:200],
            tool=template[0].tool,
            input=template[0].input,
            children=template[0].children,
        )
        tree.add_spec(
            branch,
            node.id,
            hypothesis=f"{amb.phrase!r} means {interp.description}"
            + (f" ({interp.sql_hint})" if interp.sql_hint else ""),
        )
        for extra in template[1:]:
            tree.add_spec(extra, tree.nodes[node.id].children[-1])
    if rt.interactive and not amb.settle_with_data and state.mode != "linear":
        state.pending = Clarification(
            question=amb.question or f"What does {amb.phrase!r} mean here?",
            phrase=amb.phrase,
            options=[i.description for i in interps],
            node_id=node.id,
        )


# what the planner wrote before the readings existed belongs to at most one of them: a SQL draft,
# and generate_sql's instructions (e.g. "use 'FMHH24' for no leading zero" names one reading's fix)
_DRAFT_KEYS = ("sql", "draft_sql", "instructions", "hint")


def _without_drafts(spec: NodeSpec) -> NodeSpec:
    """A planned step to copy under each reading, reading-neutral: no concrete SQL and no free-text
    instructions. Every branch's tools then work on that branch's own SQL, and generate_sql takes its
    guidance from the branch hypothesis, never from a draft or a fix written for another reading."""
    return NodeSpec(
        id=spec.id,
        description=spec.description,
        tool=spec.tool,
        input={k: v for k, v in spec.input.items() if k not in _DRAFT_KEYS},
        children=[_without_drafts(c) for c in spec.children],
    )


def _judge_candidate(rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, out: GenerateSqlOutput) -> None:
    """Verify the candidate with the checks, then judge it: alone (told which earlier candidates returned the same
    results), or against the earlier approved ones on the rows where their results differ."""
    cands = state.candidates
    original = state.original_check
    # without written checks a model's candidates are still run on the sample data, to be compared
    plan = state.checks or (CheckPlan() if rt.model is not None else None)
    ver = None
    if plan is not None and out.execution.ok:
        ver = verify(VerifyInput(sql=out.sql, checks=plan, reference=original), rt.ctx)
    rec = CandidateRecord(
        node=node.id,
        order=node.order or 0,
        sql=out.sql,
        strategy=out.strategy,
        source=out.source,
        hypothesis=tree.hypothesis_of(node.id),
        executes=out.execution.ok,
        empty=out.execution.ok and out.execution.last.empty,
        verification=ver,
        verdict=Verdict(passed=False, method="execution_only"),
    )
    doubted = doubted_checks(cands, ver) if rt.model is not None else []
    rivals: list[CandidateRecord] = []
    hard_failures = [r for r in ver.with_status("failed") if r.id not in doubted] if ver is not None else []
    if rt.model is not None and ver is not None and not hard_failures:  # refuted by a check: no rival
        rivals = cands.approved(exclude=node.id)
        draft = _draft_on_opinion(state, tree, rec)
        if draft is not None and not agree(ver, draft.verification):  # type: ignore[arg-type]
            rivals = [draft, *rivals[-1:]]
    # earlier candidates with the same results on every scenario, approved or not (the judge hears of each)
    same_results = [
        r
        for r in cands.items
        if r.node != node.id and ver is not None and r.verification is not None and agree(ver, r.verification)
    ]
    twin_nodes = {r.node for r in same_results}
    twins = [r for r in rivals if r.node in twin_nodes]
    others = [r for r in rivals if r.node not in twin_nodes]
    changed: list[CandidateRecord] = []
    winner: str | None = None
    if others and not twins:
        winner = _compare(rt, state, rec, others[-2:], original, changed)
        if winner is None and rec.verdict.method != "comparison":
            others = []  # the comparison failed: judge the candidate alone
    if twins or not others:
        # agreement is evidence to weigh, not a verdict: two candidates from one model often share a misreading
        same = [
            f"{r.node} ({r.origin}) returned the same results on every scenario and was "
            + (
                "refuted: " + "; ".join(r.verdict.reasons)[:300]
                if r.status == "refuted"
                else "approved by the judge (agreement shows the two readings coincide, not that either is right)"
            )
            for r in same_results
        ]
        _judge_alone(rt, state, rec, original, out, same, doubted)
        if rec.verdict.passed and twins:  # corroborated, not confirmed: the two may share one misreading
            twin = twins[-1]
            for a, b in ((rec, twin), (twin, rec)):
                if not a.verdict.corroborated:
                    a.verdict = a.verdict.model_copy(
                        update={
                            "corroborated": True,
                            "evidence": [
                                *a.verdict.evidence,
                                f"the judge approved it and {b.node} ({b.origin}), written independently, "
                                "returned the same results on every scenario",
                            ],
                        }
                    )
            changed.append(twin)
    for r in [rec, *changed]:
        cands.put(r)
    verified = cands.verified()
    accepted = winner or (max(verified, key=CandidateRecord.rank).node if verified else None)
    if accepted is None and rec.verdict.corroborated:  # two independent approvals agree: the search ends here
        accepted = max([rec, *changed], key=CandidateRecord.rank).node
    if accepted is None and state.verify_first and node.id == tree.root and rec.verdict.passed:
        accepted = node.id  # the judge approved the candidate verified first: nothing to revise
    if accepted is not None and (kept := _draft_stands(state, tree, cands.get(accepted))) is not None:
        accepted = kept
    for r in [rec, *changed]:
        _mark(rt, state, tree, r, chosen=r.node == accepted)
    if accepted is not None:
        state.accepted = accepted
    elif rt.model is not None and state.mode != "linear":
        _add_second_candidate(state, tree, node, rec)
    _save_candidates(state, cands)


def _draft_stands(state: TreeState, tree: PlanTree, chosen: CandidateRecord | None) -> str | None:
    """ask's own first draft, when it runs, returns rows and fails no check, is replaced only by a candidate whose
    approval is confirmed (a check the draft fails, or an independently written candidate with the same results).
    The judge and the comparison are second readings of the same question by the same kind of model: on two
    measured draws of the degraded ask set, the replacements they chose without confirmation were right 2 times in
    15, the drafts they replaced 8 times. Returns the draft's node when it stands, else None."""
    if chosen is None or not state.first_draft or chosen.verdict.confirmed or chosen.verdict.corroborated:
        return None
    draft = _draft_on_opinion(state, tree, chosen)
    if draft is None or (chosen.verification is not None and agree(chosen.verification, draft.verification)):  # type: ignore[arg-type]
        return None  # the same results on every scenario: the approved text is kept
    note = (
        f"the judge doubted the first draft and preferred {chosen.node}, but no check or independent candidate "
        "confirmed it: the draft stands"
    )
    if note not in state.notes:
        state.notes.append(note)
    return draft.node


def _draft_on_opinion(state: TreeState, tree: PlanTree, rec: CandidateRecord) -> CandidateRecord | None:
    """The candidate judged first, when it was refuted on a reading alone (it runs, returns rows and fails no check;
    the judge or a comparison doubted it). A later candidate whose results differ then meets it head to head, and
    for ask's own draft must also be confirmed to replace it (``_draft_stands``): one reading's doubt is weaker
    evidence than a failed check."""
    if not state.verify_first or rec.node == tree.root:
        return None
    first = state.candidates.get(tree.root or "")
    if (
        first is None
        or first.status != "refuted"
        or first.verdict.method not in ("llm", "comparison")  # a reading, not a failed check or no execution
        or not first.executes
        or first.empty
        or first.verification is None
        or first.failed_checks
    ):
        return None
    return first


def _judge_alone(
    rt: Runtime,
    state: TreeState,
    rec: CandidateRecord,
    original: Verification | None,
    out: GenerateSqlOutput,
    context: list[str],
    doubted: list[str],
) -> None:
    verdict = judge(
        JudgeInput(
            intent=state.intent,
            sql=rec.sql,
            original_sql=state.original_sql,
            execution=out.execution,
            verification=rec.verification,
            context=context,
            doubted=doubted,
            original_plan=original.plan if original is not None else None,
        ),
        rt.ctx,
    )
    if verdict.passed and verdict.method == "llm" and rec.verification is not None:
        evidence = confirming_checks(rec.verification, original)
        verdict = verdict.model_copy(update={"confirmed": bool(evidence), "evidence": evidence})
    rec.verdict = verdict
    rec.status = "refuted" if not verdict.passed else "verified" if verdict.confirmed else "unconfirmed"


def _compare(
    rt: Runtime,
    state: TreeState,
    rec: CandidateRecord,
    rivals: list[CandidateRecord],
    original: Verification | None,
    changed: list[CandidateRecord],
) -> str | None:
    """Listwise judgement of the new candidate against approved rivals whose results differ. Their results differ,
    so at most one of them can be right: the one chosen (and found right) stays approved and the run ends with it;
    every other one is no longer approved. Without a winner only those found wrong lose their approval. Returns
    the winner's node, or None (then a new candidate the comparison said nothing of is judged alone)."""
    group = sorted([*rivals, rec], key=lambda c: c.order)
    labels = {c.node: chr(ord("A") + i) for i, c in enumerate(group)}
    try:
        comp = compare_candidates(
            CompareInput(
                intent=state.intent,
                original_sql=state.original_sql,
                original_is_draft=state.first_draft,
                checks=state.checks,
                contenders=[
                    Contender(
                        label=labels[c.node],
                        node=c.node,
                        origin=c.origin,
                        sql=c.sql,
                        verification=c.verification,
                        # a refuted draft meets its replacement blind: a second reading, not an echo of the first
                        judged=c.verdict.summary() if c is not rec and c.status != "refuted" else "",
                    )
                    for c in group
                    if c.verification is not None
                ],
            ),
            rt.ctx,
        )
    except _MODEL_FAULTS as e:
        state.failures.append(_failure(e, node=rec.node, phase="compare"))
        return None
    best = comp.best if comp.best and (v := comp.verdict_of(comp.best)) is not None and v.right else None
    winner = None
    for c in group:
        label = labels[c.node]
        v = comp.verdict_of(label)
        reason = (v.reason if v else "") or comp.reason
        if best == label:
            others = ", ".join(f"{o.node} ({labels[o.node]})" for o in group if o is not c)
            confirming = confirming_checks(c.verification, original) if c.verification is not None else []
            confirmed = c.verdict.confirmed or bool(confirming)
            upd = {
                "passed": True,
                "method": "comparison",
                "confirmed": confirmed,
                "evidence": [
                    *c.verdict.evidence,
                    *(e for e in confirming if e not in c.verdict.evidence),
                    f"chosen over {others} on the rows where their results differ: {reason}"[:600],
                ],
            }
            status = "verified" if confirmed else "unconfirmed"
            winner = c.node
        elif (v is not None and not v.right) or best:
            why = f"the comparison found it wrong: {reason}" if v is not None and not v.right else ""
            why = why or f"the comparison preferred {best}: {reason}"
            upd = {
                "passed": False,
                "method": "comparison",
                "confirmed": False,
                "corroborated": False,
                "evidence": [],
                "reasons": [why[:600]],
            }
            status = "refuted"
        else:  # no winner and no word on this one: its earlier verdict stands (a new candidate is judged alone)
            continue
        c.verdict = c.verdict.model_copy(update={**upd, "checks": c.verification.results if c.verification else []})
        c.status = status  # type: ignore[assignment]
        if c is not rec:
            changed.append(c)
    return winner


def _mark(rt: Runtime, state: TreeState, tree: PlanTree, rec: CandidateRecord, *, chosen: bool) -> None:
    """Put the record's verdict on its node (where the CLI, the copilot and the benchmarks read it). One node is
    accepted (the run ends with it); another verified or corroborated candidate is done, its verdict saying why."""
    node = tree.nodes[rec.node]
    node.verdict = rec.verdict.model_copy(deep=True)
    statuses: dict[str, NodeStatus] = {
        "verified": "accepted" if chosen else "done",
        "unconfirmed": "accepted" if chosen else "done" if rec.verdict.corroborated else "unconfirmed",
        "refuted": "refuted",
    }
    node.status = statuses[rec.status]
    if rt.model is None and rec.verdict.passed:  # the LLM-free fallback accepts what executes with rows
        node.status = "accepted"
    if rec.status == "refuted" and not any(r.node == rec.node for r in state.refuted):
        why = rec.verdict.reasons or [rec.verdict.summary()]
        state.refuted.append(Refuted(node=rec.node, sql=statements_text(rec.sql)[:600], why="; ".join(why)[:600]))
    execution = node.output.execution.summary() if isinstance(node.output, GenerateSqlOutput) else ""
    rt.emit(
        "candidate",
        rec.verdict.summary(),
        rec.node,
        sql=rec.sql,
        status=rec.status,
        passed=True if node.status == "accepted" else False if rec.status == "refuted" else None,
        execution=execution,
    )


def _add_second_candidate(state: TreeState, tree: PlanTree, node: PlanNode, rec: CandidateRecord) -> None:
    """A candidate that runs but is not verified gets one written the other way beside it (one per reading): a
    minimal edit gets a direct rewrite; an approved but unconfirmed direct rewrite gets a minimal edit of the
    original. The two are compared on the same checks (agreement corroborates, a difference is judged head to
    head). An unconfirmed one goes to it next; after a refutation the planner decides."""
    if not rec.executes:
        return
    if rec.strategy == "minimal_edit":
        want = "rewrite"
        spec = NodeSpec(
            description="direct rewrite from the request (a second, independent candidate)",
            tool="generate_sql",
            input={"strategy": "rewrite"},
        )
    elif rec.status == "unconfirmed" and state.original_sql and not state.verify_first:
        want = "minimal_edit"
        spec = NodeSpec(
            description="minimal edit of the original (a second, independent candidate)",
            tool="generate_sql",
            input={},
        )
    else:
        return
    hyp = rec.hypothesis
    if any(
        n.tool == "generate_sql"
        and n.input.get("strategy", "minimal_edit") == want
        and n.input.get("use_llm", True)
        and tree.hypothesis_of(n.id) == hyp
        for n in tree.nodes.values()
    ):
        return
    if node.parent is None:  # a one-node plan: the rewrite goes under it (the tree has one root)
        sid = tree.add_spec(spec, node.id)
    else:  # beside it, under the same reading (a reading's hypothesis may sit on the candidate's own node)
        sid = tree.add_spec(spec, node.parent, hypothesis=node.hypothesis)
    if rec.status == "unconfirmed":
        state.jump = sid


# ---------------------------------------------------------------------------------------------------
# advance: accept, select, roll back, or stop


def _advance(rt: Runtime, state: TreeState) -> str:
    tree = state.tree
    node = tree.nodes[tree.cursor or ""]
    linear = state.mode == "linear"
    if state.accepted:
        return _finish(rt, state, "accepted", state.accepted)
    if node.status == "accepted":
        return _finish(rt, state, "accepted", node.id)
    over = _over_budget(rt.budget, state)
    if over:
        state.notes.append(f"budget exhausted ({over}): returning the best candidate so far")
        return _finish(rt, state, "budget", None)
    jump, state.jump = state.jump, None
    if jump in tree.nodes and tree.nodes[jump].status == "pending":  # the verification sibling: compare first
        tree.cursor = jump
        return "execute"
    if node.status == "unconfirmed":  # approved, and no second candidate is left to compare it with
        return _finish(rt, state, "accepted", None)
    pending = tree.pending_children(node.id)
    dead_end = node.status in ("refuted",) or (not pending and node.status in ("done", "failed"))
    if not dead_end:
        if len(pending) == 1 or linear:
            tree.cursor = pending[0].id
        else:
            tree.cursor = _select(rt, state, tree, node, pending)
        return "execute"
    target = None if linear else _rollback_target(tree, node)
    cursor = _revise(rt, state, tree, node, target)
    if cursor is None:
        if not any(n.status == "pending" for n in tree.nodes.values()):
            state.notes.append("no unexplored alternative is left")
        return _finish(rt, state, "exhausted", None)
    tree.cursor = cursor
    return "execute"


def _over_budget(b: Budget, state: TreeState) -> str | None:
    c = state.counters
    if c.nodes >= b.max_nodes:
        return f"{b.max_nodes} nodes"
    if c.llm_calls >= b.max_llm_calls:
        return f"{b.max_llm_calls} LLM calls"
    if c.prompt_tokens + c.completion_tokens >= b.max_tokens:
        return f"{b.max_tokens} tokens"
    if c.wall_ms >= b.max_wall_s * 1000:
        return f"{b.max_wall_s:.0f} s wall time"
    return None


def _rollback_target(tree: PlanTree, node: PlanNode) -> PlanNode | None:
    """Bottom-up: the nearest ancestor-or-self with unexplored children."""
    for n in reversed(tree.path(node.id)):
        pending = tree.pending_children(n.id)
        if pending:
            return pending[0]
    return None


def _select(rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, pending: list[PlanNode]) -> str:
    ids = [p.id for p in pending]
    if rt.model is not None:
        reply = _ask_planner(
            rt,
            state,
            tree,
            "select",
            options=ids,
            validate=lambda r: None if r.cursor in ids else f"cursor must be one of {ids}",
        )
        if reply is not None:
            _decide(state, "select", reply, rt)
            return reply.cursor or ids[0]
        state.notes.append(f"planner selection failed at {node.id}: took the first branch")
    return ids[0]


def _revise(rt: Runtime, state: TreeState, tree: PlanTree, node: PlanNode, target: PlanNode | None) -> str | None:
    """After a refuted candidate or a dead end: the planner may add nodes and move the cursor."""
    linear = state.mode == "linear"
    if rt.model is not None:
        idmap: dict[str, str] = {}

        def validate(r: PlannerReply) -> str | None:
            if r.stop:
                return None
            for a in r.add:
                if a.parent not in tree.nodes and a.parent not in _spec_ids(r):
                    return f"unknown parent {a.parent!r}"
                if linear and a.parent != node.id:
                    return f"linear mode: new nodes must go under {node.id}"
            ids_after = set(tree.nodes) | _spec_ids(r)
            if r.cursor is None or r.cursor not in ids_after:
                return "cursor must name a pending node (an existing one or one you add)"
            if r.cursor in tree.nodes and tree.nodes[r.cursor].status != "pending":
                return f"node {r.cursor} was already executed; choose a pending node"
            return None

        reply = _ask_planner(
            rt, state, tree, "revise", failed=node.id, suggested=target.id if target else None, validate=validate
        )
        if reply is not None:
            _decide(state, "revise", reply, rt)
            if reply.stop:
                return None
            for a in reply.add:
                parent = idmap.get(a.parent, a.parent)
                tree.add_spec(a.node, parent, linear=linear, idmap=idmap)
            return idmap.get(reply.cursor or "", reply.cursor)
        state.notes.append(f"planner revision failed after {node.id}: rolled back deterministically")
    if target is not None:
        return target.id
    if rt.model is not None and (linear or (node.tool != "generate_sql" and node.status == "done")):
        # linear: keep going down the one path; tree: a path the plan left without a leaf gets one
        return _append_leaf(tree, node)
    return None


def _append_leaf(tree: PlanTree, node: PlanNode) -> str:
    return tree.add_spec(NodeSpec(description="regenerate from the evidence so far", tool="generate_sql"), node.id)


def _spec_ids(r: PlannerReply) -> set[str]:
    out: set[str] = set()

    def visit(s: NodeSpec) -> None:
        if s.id:
            out.add(s.id)
        for c in s.children:
            visit(c)

    for a in r.add:
        visit(a.node)
    return out


# ---------------------------------------------------------------------------------------------------
# the planner


def _ask_planner(
    rt: Runtime,
    state: TreeState,
    tree: PlanTree,
    phase: str,
    *,
    options: list[str] | None = None,
    failed: str | None = None,
    suggested: str | None = None,
    validate=None,
) -> PlannerReply | None:
    """One planner decision; malformed or invalid replies are recorded and re-asked (bounded)."""
    problem: str | None = ""
    for _attempt in range(rt.budget.planner_retries + 1):
        try:
            resp = rt.ctx.complete(
                "planner",
                role="planner",
                response_model=PlannerReply,
                phase=phase,
                mode=state.mode,
                intent=state.intent,
                original_sql=statements_text(state.original_sql),
                original_result=state.original_result,
                schema_can_inspect=True,
                **rt.ctx.schema_vars(sql=_planner_sql(state), intent=state.intent),
                tools=[{"name": t.name, "purpose": t.purpose, "input": _json(t.planner_input)} for t in TOOLS.values()],
                tree=_json(tree.for_planner()) if tree.nodes else "",
                cursor=tree.cursor,
                options=options or [],
                failed=failed,
                suggested=suggested,
                refuted=state.refuted[-4:],
                problem=problem,
            )
        except StructuredOutputError as e:
            state.failures.append(_failure(e, phase=phase))
            problem = f"your previous reply was not valid JSON for the schema: {'; '.join(e.errors)[:400]}"
            continue
        reply: PlannerReply = resp.parsed
        if phase == "initial" and reply.plan is None:
            problem = "phase 'initial' needs a 'plan' object"
        else:
            problem = validate(reply) if validate else None
        if not problem:
            return reply
        state.failures.append(Failure(phase=phase, kind="invalid_decision", errors=[problem]))
        problem = f"your previous decision was invalid: {problem}"
    return None


def _planner_sql(state: TreeState) -> list[str]:
    """The SQL whose tables the planner's schema listing covers: the original and refuted candidates."""
    return sql_list(state.original_sql, [r.sql for r in state.refuted[-4:]])


def _decide(state: TreeState, phase: str, reply: PlannerReply, rt: Runtime) -> None:
    state.decisions.append(
        Decision(phase=phase, cursor=reply.cursor, reason=reply.reason[:500], added=len(reply.add), stop=reply.stop)
    )
    if reply.reason:
        rt.emit("note", f"planner ({phase}): {reply.reason[:200]}")


def _json(obj: Any) -> str:
    """JSON for prompts: readable SQL (no HTML escaping of < > ' as jinja's tojson does)."""
    return json.dumps(obj, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------
# clarify (interactive) and finish


def _clarify(rt: Runtime, state: TreeState) -> str:
    pending = state.pending or Clarification(question="")
    answer = interrupt(pending.model_dump())  # the run pauses here until resume(thread_id, answer)
    tree = state.tree
    asked = pending.node_id or ""
    branches = [c for c in tree.pending_children(asked)]
    choice = _match_answer(str(answer), pending.options)
    if choice is not None and choice < len(branches):
        tree.cursor = branches[choice].id
    else:  # a reading none of the options covered: a new branch with the user's words
        spec = branches[0] if branches else None
        tmpl = (
            _without_drafts(tree.subtree_spec(spec.id))
            if spec
            else NodeSpec(description="write the SQL", tool="generate_sql")
        )
        tmpl.description = f"user's reading: {answer}"[:200]
        tree.cursor = tree.add_spec(tmpl, asked, hypothesis=f"user says: {answer}")
    for b in branches:  # the user settled it: other readings are not explored
        if b.id != tree.cursor:
            b.status = "skipped"
    state.notes.append(f"user clarified {pending.phrase!r}: {answer}")
    state.pending = None
    return "execute"


def _match_answer(answer: str, options: list[str]) -> int | None:
    a = answer.strip().lower()
    if a.isdigit() and 1 <= int(a) <= len(options):
        return int(a) - 1
    for i, o in enumerate(options):
        if a and (a == o.lower() or a in o.lower()):
            return i
    return None


def _finish(rt: Runtime, state: TreeState, reason: str, node_id: str | None) -> str:
    tree = state.tree
    cands = state.candidates
    best = cands.best()
    first = cands.get(tree.root or "") if state.verify_first else None
    if node_id is None and first is not None and first.executes and (best is None or best.status == "refuted"):
        best = first  # nothing was approved: the candidate judged first stands, no alternative was verified either
    elif node_id is None and best is not None and (kept := _draft_stands(state, tree, best)) is not None:
        best = cands.get(kept)
    elif node_id is None and (best is None or best.status == "refuted") and (plain := _rewrite_stands(state)):
        best = plain
    chosen = node_id or (best.node if best else None)
    rec = cands.get(chosen) if chosen else None
    outvoted = None
    if rec is not None and (group := _outvoted_by(rt, state, rec)):
        outvoted, rec, chosen = rec.node, group[0], group[0].node
    if reason == "accepted" and rec is not None and rec.verdict.passed and rec.verdict.method != "execution_only":
        status: FinalStatus = "solved"
        if not rec.verdict.confirmed:
            state.notes.append(
                "the judge approved the candidate, but no check the original fails confirmed it"
                + (" (an independently written candidate agreed)" if rec.verdict.corroborated else "")
            )
    elif reason == "accepted" and rec is not None:
        status = "best_effort"
        if rec.verdict.method == "execution_only":
            state.notes.append("the candidate executes but no LLM judge verified its meaning")
    elif rec is not None and rec.executes:
        status = "best_effort"
    else:
        status = "failed"
    others = _alternatives(rt, state, rec)
    state.final = Final(status=status, node=chosen, reason=reason, outvoted=outvoted, alternatives=others)
    for n in tree.nodes.values():  # one ★: other verified candidates stay readable by their verdicts
        if n.status == "accepted" and n.id != chosen:
            n.status = "done"
    tree.cursor = chosen or tree.cursor
    return END


def _rewrite_stands(state: TreeState) -> CandidateRecord | None:
    """When the judge approved no candidate, the direct rewrite from the request (``plain_rewrite``), with a note.
    Not in linear mode (the ablation keeps its own path), nor where a candidate was judged first (it stands)."""
    if state.mode == "linear" or state.verify_first or state.first_draft:
        return None
    plain = plain_rewrite(state.candidates)
    if plain is not None:
        state.notes.append(
            f"the judge approved no candidate: the direct rewrite from the request ({plain.node}) stands"
        )
    return plain


def _outvoted_by(rt: Runtime, state: TreeState, rec: CandidateRecord) -> list[CandidateRecord]:
    """The agreeing candidates that replace an unconfirmed choice standing alone (``outvoting``), with a note
    saying so. Not in linear mode (one candidate per step) nor for ask's draft, which has its own rule."""
    if rt.model is None or state.mode == "linear" or state.first_draft:
        return []
    group = outvoting(state.candidates, rec)
    if group:
        names = " and ".join(c.node for c in group)
        state.notes.append(
            f"{names}, written independently, returned the same results on every scenario and failed no check; "
            f"{rec.node}, approved on the judge's reading alone, agreed with neither: {group[0].node} is returned"
        )
    return group


def _alternatives(rt: Runtime, state: TreeState, rec: CandidateRecord | None) -> list[str]:
    """Other readings still standing beside an unverified answer (``candidates.alternatives``), named in a note so
    the user sees the split wherever the run is shown (CLI, copilot, MCP). Not without a model: the LLM-free
    fallback writes no alternatives, only repairs."""
    if rec is None or rt.model is None:
        return []
    found = alternatives(state.candidates, rec)
    if found:
        state.notes.append(
            "other readings also run cleanly and return other rows: "
            + "; ".join(f"{c.node} ({c.origin})" for c in found)
            + f". No check settles it: if {rec.node} is not what you meant, one of them may be"
        )
    return [c.node for c in found]


def _fault_text(e: BaseException) -> str:
    if isinstance(e, ValidationError):
        return (
            "invalid tool input: " + "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())[:500]
        )
    return f"{type(e).__name__}: {e}"[:800]


def _failure(e: BaseException, **where: str) -> Failure:
    if isinstance(e, StructuredOutputError):
        return Failure.model_validate({**where, **e.summary()})
    return Failure.model_validate({**where, "kind": type(e).__name__, "errors": [_fault_text(e)]})
