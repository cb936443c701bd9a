"""Control flow around failures: budgets, malformed model output, provider errors, checkpoints, pauses,
and the guard: the agent never sends SQL the active policy forbids."""

from __future__ import annotations

import uuid

import pytest
from agent_scripts import NO_CHECKS, failed_of, options_of, phase_of, scores, user_text

from actsagent.agent import repair, resume
from actsagent.graphs.models import Budget
from actsagent.llm import ProviderError, ScriptedChatModel

INTENT = "Total paid amount per customer name"
BAD = "SELECT c.name, SUM(o.totl) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.name"
GOOD = (
    "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.id "
    "WHERE o.status = 'paid' GROUP BY c.name ORDER BY c.name"
)
SIMPLE_PLAN = {
    "reason": "run, then write",
    "cursor": "r",
    "plan": {
        "id": "r",
        "tool": "run_sql",
        "description": "run it",
        "children": [{"id": "g", "tool": "generate_sql", "description": "fix it"}],
    },
}


def simple(sql: str = GOOD, judge_score: int = 9):
    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "CheckPlan":
            return NO_CHECKS
        if name == "PlannerReply":
            if phase_of(messages) == "initial":
                return SIMPLE_PLAN
            return {
                "reason": "again",
                "cursor": "x",
                "add": [{"parent": failed_of(messages), "node": {"id": "x", "tool": "generate_sql"}}],
            }
        if name == "GeneratedSQL":
            return {"sql": sql, "rationale": "fix the column and keep paid orders"}
        if name == "JudgeScores":
            return scores(judge_score, "ok" if judge_score > 5 else "wrong")
        raise AssertionError(name)

    return script


def test_budget_exhaustion_returns_best_candidate_marked(pg_db):
    model = ScriptedChatModel(simple(judge_score=3))  # every candidate refuted; planner keeps adding leaves
    run = repair(INTENT, BAD, pg_db, model=model, budget=Budget(max_nodes=4))
    assert run.status == "best_effort"
    assert any("budget exhausted (4 nodes)" in n for n in run.notes)
    assert len(run.tree.executed()) == 4
    assert run.final_sql == GOOD and run.final_node is not None
    assert run.tree.nodes[run.final_node].status == "refuted"  # best so far, not a passing one
    assert run.result.ok


def test_llm_call_budget(pg_db):
    model = ScriptedChatModel(simple(judge_score=3))
    run = repair(INTENT, BAD, pg_db, model=model, budget=Budget(max_llm_calls=5))
    assert run.status == "best_effort" and any("LLM calls" in n for n in run.notes)
    assert run.usage.llm_calls <= 5 + 3  # the step that crossed the limit completes


def test_malformed_planner_output_falls_back_and_is_recorded(pg_db):
    def script(messages, role, response_model):
        if response_model.__name__ == "CheckPlan":
            return NO_CHECKS
        if response_model.__name__ == "PlannerReply":
            return "I think we should run the query first!"  # not JSON, also not after the repair round
        if response_model.__name__ == "GeneratedSQL":
            return {"sql": GOOD}
        return scores(9)

    model = ScriptedChatModel(script)
    runs_but_wrong = BAD.replace("o.totl", "o.total")
    run = repair(INTENT, runs_but_wrong, pg_db, model=model, budget=Budget(planner_retries=1))
    assert any(f.get("kind") == "structured_output" and f.get("schema") == "PlannerReply" for f in run.model_failures)
    assert any("fallback plan" in n for n in run.notes)
    assert run.tree.nodes[run.tree.root].tool == "run_sql"  # the deterministic plan ran
    assert run.final_sql is not None


def test_malformed_tool_output_fails_the_node_and_the_run_continues(pg_db):
    def script(messages, role, response_model):
        if response_model.__name__ == "CheckPlan":
            return NO_CHECKS
        name = response_model.__name__
        if name == "PlannerReply":
            return {
                "cursor": "d",
                "plan": {"id": "d", "tool": "detect_ambiguities", "children": [{"id": "g", "tool": "generate_sql"}]},
            }
        if name == "AmbiguityReport":
            return {"ambiguities": "lots"}  # wrong type, twice
        if name == "GeneratedSQL":
            return {"sql": GOOD}
        return scores(9)

    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    root = run.tree.nodes[run.tree.root]
    assert root.status == "failed" and "StructuredOutputError" in root.error
    assert run.status == "solved" and run.final_sql == GOOD


def test_invalid_planner_decision_is_re_asked(pg_db):
    asked = []

    def script(messages, role, response_model):
        if response_model.__name__ == "CheckPlan":
            return NO_CHECKS
        name = response_model.__name__
        if name == "PlannerReply":
            asked.append(phase_of(messages))
            if phase_of(messages) == "initial" and len(asked) == 1:
                return {"reason": "no plan"}  # valid JSON, invalid decision for this phase
            return SIMPLE_PLAN
        return {"sql": GOOD} if name == "GeneratedSQL" else scores(9)

    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    assert asked == ["initial", "initial"]
    assert any(f.get("kind") == "invalid_decision" for f in run.model_failures)
    assert run.status == "solved"


def test_provider_errors_are_retried(pg_db):
    base = simple()
    seen = {"n": 0}

    def flaky(messages, role, response_model):
        seen["n"] += 1
        if seen["n"] in (1, 3):
            return ProviderError.rate_limited()
        return base(messages, role, response_model)

    model = ScriptedChatModel(flaky)
    run = repair(INTENT, BAD, pg_db, model=model)
    assert run.status == "solved"
    assert len(model.calls) == run.usage.llm_calls + 2  # two retried attempts, not counted as calls


def test_provider_outage_fails_then_resumes_from_checkpoint(pg_db):
    def down(messages, role, response_model):
        if response_model.__name__ == "GeneratedSQL":
            return ProviderError.bad_request("model not found", status=404)
        return simple()(messages, role, response_model)

    first = ScriptedChatModel(down)
    tid = f"outage-{uuid.uuid4().hex}"
    run = repair(INTENT, BAD, pg_db, model=first, thread_id=tid)
    assert run.status == "failed" and any("provider failed" in n for n in run.notes)
    assert run.thread_id == tid
    executed_before = [n.id for n in run.tree.executed()]
    assert executed_before == ["n0"]  # run_sql finished and was checkpointed

    second = ScriptedChatModel(simple())
    again = repair(INTENT, BAD, pg_db, model=second, thread_id=tid)
    assert again.status == "solved" and again.final_sql == GOOD
    roles = [c.response_model for c in second.calls]
    assert "PlannerReply" not in roles  # the plan was not redone: it continued from the checkpoint
    assert again.tree.nodes["n0"].order == 1


AMBIG = {
    "ambiguities": [
        {
            "phrase": "paid amount",
            "interpretations": [
                {"description": "sum of totals of orders with status paid"},
                {"description": "sum of all order totals, refunds included"},
            ],
            "settle_with_data": False,
            "question": "Should refunded orders count as paid?",
        }
    ]
}


def clarify_script(messages, role, response_model):
    if response_model.__name__ == "CheckPlan":
        return NO_CHECKS
    name = response_model.__name__
    text = user_text(messages)
    if name == "PlannerReply":
        if phase_of(messages) == "initial":
            return {
                "cursor": "d",
                "plan": {"id": "d", "tool": "detect_ambiguities", "children": [{"id": "g", "tool": "generate_sql"}]},
            }
        return {"cursor": options_of(messages)[0]}
    if name == "AmbiguityReport":
        return AMBIG
    if name == "GeneratedSQL":
        if "refunds included" in text.split("Branch hypothesis")[-1].split("\n")[0]:
            return {
                "sql": "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.id "
                "GROUP BY c.name ORDER BY c.name"
            }
        return {"sql": GOOD}
    return scores(9)


def test_interactive_run_pauses_for_clarification_and_resumes(pg_db):
    events = []
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(clarify_script), interactive=True, on_event=events.append)
    assert run.status == "paused" and run.pending_clarification is not None
    assert run.pending_clarification.question == "Should refunded orders count as paid?"
    assert len(run.pending_clarification.options) == 2
    assert any(e.type == "clarify" for e in events)

    done = resume(run.thread_id, "2", pg_db, model=ScriptedChatModel(clarify_script))
    assert done.status == "solved"
    assert "WHERE" not in done.final_sql  # the user's reading: refunds included
    skipped = [n for n in done.tree.nodes.values() if n.status == "skipped"]
    assert len(skipped) == 1


def test_batch_run_chooses_by_itself(pg_db):
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(clarify_script), interactive=False)
    assert run.status == "solved" and run.final_sql == GOOD


def test_strict_policy_never_sends_forbidden_sql(pg_db):
    """A model proposing DROP TABLE gets a guard rejection recorded; the table survives."""
    model = ScriptedChatModel(simple(sql="DROP TABLE orders"))
    run = repair("remove the orders table", "SELECT * FROM orders", pg_db, model=model, budget=Budget(max_nodes=3))
    leaves = [n for n in run.tree.nodes.values() if n.tool == "generate_sql" and n.output]
    assert leaves and all(n.status == "refuted" for n in leaves)
    err = leaves[0].output.execution.statements[0].error
    assert err.error_class == "guard_rejected" and err.engine == "guard"
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]
    assert run.status != "solved"


def test_plan_without_a_leaf_gets_one(pg_db):
    def script(messages, role, response_model):
        if response_model.__name__ == "CheckPlan":
            return NO_CHECKS
        name = response_model.__name__
        if name == "CheckPlan":
            return NO_CHECKS
        if name == "PlannerReply":
            if phase_of(messages) == "initial":
                return {"cursor": "r", "plan": {"id": "r", "tool": "run_sql"}}  # no generate_sql leaf
            return {"reason": "pointing nowhere", "cursor": "zzz"}  # invalid every time
        return {"sql": GOOD} if name == "GeneratedSQL" else scores(9)

    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    assert run.status == "solved"
    # the appended leaf, then its direct-rewrite sibling, which agrees with it (no planner call in between); the
    # judge approves the rewrite knowing of the agreement, and the agreement then corroborates both
    assert [n.tool for n in run.tree.executed()] == ["run_sql", "generate_sql", "generate_sql"]
    assert [n.input for n in run.tree.executed()][1:] == [{}, {"strategy": "rewrite"}]
    assert run.verdict.corroborated and "written independently" in run.verdict.evidence[0]
    assert sum(f.get("kind") == "invalid_decision" for f in run.model_failures) == 2


def test_bad_tool_input_from_the_planner_fails_that_node_only(pg_db):
    def script(messages, role, response_model):
        if response_model.__name__ == "CheckPlan":
            return NO_CHECKS
        name = response_model.__name__
        if name == "PlannerReply":
            return {
                "cursor": "i",
                "plan": {
                    "id": "i",
                    "tool": "inspect_columns",
                    "input": {"table": "no_such_table"},
                    "children": [{"id": "g", "tool": "generate_sql"}],
                },
            }
        return {"sql": GOOD} if name == "GeneratedSQL" else scores(9)

    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    first = run.tree.nodes[run.tree.root]
    assert first.status == "failed" and "no table named 'no_such_table'" in first.error
    assert run.status == "solved"


def test_bugs_are_not_swallowed(pg_db):
    """A broken script (a test bug, like an actsagent bug) propagates instead of becoming a model failure."""
    from actsagent.llm import ScriptExhausted

    with pytest.raises(ScriptExhausted):
        repair(INTENT, BAD, pg_db, model=ScriptedChatModel([SIMPLE_PLAN]))


def test_token_budget(pg_db):
    # the checks and the plan take about 2,000 (scripted) tokens; the first candidate crosses the budget
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(simple(judge_score=3)), budget=Budget(max_tokens=2500))
    assert run.status == "best_effort" and any("tokens" in n for n in run.notes)
    assert run.final_sql == GOOD  # the best (refuted) candidate is still returned
    assert [n.tool for n in run.tree.executed()] == ["run_sql", "generate_sql"]


def test_wall_time_budget_before_any_candidate(pg_db):
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(simple()), budget=Budget(max_wall_s=0.001))
    assert any("wall time" in n for n in run.notes)
    assert run.status == "failed" and run.final_sql is None  # stopped before any candidate existed
    assert [n.tool for n in run.tree.executed()] == ["run_sql"]


def test_every_prompt_shows_a_statement_list_the_same_way(pg_db):
    """Planner, ambiguity detector, generator and judge see one format: numbered, ';'-terminated."""
    stmts = ["SELECT count(*) FROM customers", "SELECT nme FROM customers"]
    fixed = ["SELECT count(*) FROM customers", "SELECT name FROM customers"]
    shown = "-- statement 1 of 2\nSELECT count(*) FROM customers;\n-- statement 2 of 2\nSELECT nme FROM customers;"
    seen: dict[str, list[list[dict]]] = {}

    def script(messages, role, response_model):
        name = response_model.__name__
        seen.setdefault(name, []).append(messages)
        if name == "CheckPlan":
            return NO_CHECKS
        if name == "PlannerReply":
            return {
                "reason": "readings, then write",
                "cursor": "a",
                "plan": {
                    "id": "a",
                    "tool": "detect_ambiguities",
                    "description": "readings",
                    "children": [{"id": "g", "tool": "generate_sql", "description": "fix it"}],
                },
            }
        if name == "AmbiguityReport":
            return {"ambiguities": []}
        if name == "GeneratedSQL":
            return {"sql": fixed, "rationale": "nme -> name"}
        if name == "JudgeScores":
            return scores(9, "ok")
        raise AssertionError(name)

    run = repair("count customers, then list their names", stmts, pg_db, model=ScriptedChatModel(script))
    assert run.status == "solved" and run.final_sql_statements == fixed
    for name in ("CheckPlan", "PlannerReply", "AmbiguityReport", "GeneratedSQL"):
        assert shown in user_text(seen[name][0]), name
    assert shown in user_text(seen["GeneratedSQL"][1])  # the direct rewrite, too
    assert shown.replace("nme", "name") in user_text(seen["JudgeScores"][0])
    gen_system = seen["GeneratedSQL"][0][0]["content"]
    assert "JSON array of strings" in gen_system and '["<statement 1>", "<statement 2>", ...]' in gen_system


def test_a_single_statement_is_shown_terminated_and_answered_as_a_string(pg_db):
    seen = []

    def script(messages, role, response_model):
        if response_model.__name__ == "GeneratedSQL":
            seen.append(messages)
        return simple()(messages, role, response_model)

    repair(INTENT, [BAD], pg_db, model=ScriptedChatModel(script))
    assert f"Original SQL:\n{BAD};" in user_text(seen[0])
    assert "one JSON string" in seen[0][0]["content"] and "JSON array" not in seen[0][0]["content"]
