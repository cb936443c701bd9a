"""Verification that can refute: checks written from the request before any candidate, run in disposable
copies of the real embedded PostgreSQL; a direct-rewrite sibling; candidates compared on differing rows.

Every test drives the real graph, tools and database with a scripted model that answers by request type.
"""

from __future__ import annotations

import re

from agent_scripts import failed_of, is_rewrite, judged_sql, phase_of, scores, user_text
from conftest import SHOP_SETUP

from actsagent.agent import repair
from actsagent.graphs.models import AgentRun, Budget
from actsagent.guard import Policy
from actsagent.llm import ScriptedChatModel

INTENT = (
    "Total paid amount per customer name; every customer must be listed, with 0 when nothing was paid. "
    "With the current data I expect Ada 120.50, Bob 99.99 and Chloe 0."
)
BAD = "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.name"
# keeps the inner join the request complains about: Chloe disappears
MINIMAL = (
    "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.id "
    "WHERE o.status = 'paid' GROUP BY c.name"
)
REWRITE = (
    "SELECT c.name, COALESCE(SUM(o.total) FILTER (WHERE o.status = 'paid'), 0) AS paid "
    "FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.name"
)
EXAMPLE = {
    "kind": "example",
    "why": "I expect Ada 120.50, Bob 99.99 and Chloe 0",
    "expected": {"columns": ["name", "paid"], "rows": [["Ada", "120.50"], ["Bob", 99.99], ["Chloe", 0]]},
}
COLUMNS = {
    "kind": "columns",
    "why": "per customer name",
    "columns": [{"name": "name", "type": "text"}, {"name": "paid", "type": "number"}],
}


def suggested(messages) -> dict:
    m = re.search(r"nearest unexplored alternative: (n\d+)", user_text(messages))
    return {"reason": "try the untried sibling", "cursor": m.group(1)} if m else {"stop": True}


def one_leaf_plan(messages) -> dict:
    if phase_of(messages) == "initial":
        return {"reason": "the fix looks local", "cursor": "g", "plan": {"id": "g", "tool": "generate_sql"}}
    return suggested(messages)


def leaf_script(checks: dict, minimal, rewrite=None, *, calls: list[str] | None = None, **answers):
    """A model for a one-leaf plan: ``checks`` from the check writer, ``minimal`` from the minimal edit, ``rewrite``
    (default: the same) from the direct rewrite, judge scores 9; ``answers`` override by request type (a callable
    answers from the messages)."""

    def script(messages, role, response_model):
        name = response_model.__name__
        if calls is not None:
            calls.append(name)
        if name in answers:
            a = answers[name]
            return a(messages) if callable(a) else a
        if name == "CheckPlan":
            return checks
        if name == "PlannerReply":
            return one_leaf_plan(messages)
        if name == "GeneratedSQL":
            return {"sql": (rewrite or minimal) if is_rewrite(messages) else minimal}
        if name == "JudgeScores":
            return scores(9, "ok")
        raise AssertionError(name)

    return script


def test_wrong_first_candidate_refuted_by_the_example_then_the_rewrite_is_verified_and_chosen(pg_db):
    calls: list[str] = []

    def judge(messages):
        assert "✓ c2 example passed" in user_text(messages)  # the judge sees the concrete check results
        return scores(9, "left join keeps every customer")

    script = leaf_script({"checks": [COLUMNS, EXAMPLE]}, MINIMAL, REWRITE, calls=calls, JudgeScores=judge)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)

    assert run.status == "solved" and run.final_sql == REWRITE, run.render_text()
    first = run.tree.nodes[run.tree.root]
    assert first.status == "refuted" and first.output.sql == MINIMAL
    assert first.verdict.method == "checks" and first.verdict.passed is False
    failed = [c for c in first.verdict.checks if c.status == "failed"]
    assert [c.id for c in failed] == ["c2"] and "missing (Chloe, 0)" in failed[0].detail
    chosen = run.tree.nodes[run.final_node]
    assert chosen.input == {"strategy": "rewrite"} and chosen.status == "accepted"
    assert (
        chosen.verdict.confirmed is True and "c2 example passes (the original fails it)" in chosen.verdict.evidence[0]
    )
    assert calls.count("JudgeScores") == 1  # the refuted candidate cost no judge call
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "PlannerReply", "GeneratedSQL", "JudgeScores"]
    assert run.original_checks is not None and run.original_checks.result("c2").status == "failed"
    text = run.render_text()
    assert "check ✗ c2 example FAILED" in text and "check ✓ c2 example passed" in text
    back = AgentRun.model_validate_json(run.model_dump_json())  # checks and verdicts survive JSON
    assert back.model_dump(exclude={"result"}) == run.model_dump(exclude={"result"})
    assert "c2 example: 3 expected row(s)" in text and "[original: failed]" in text


def test_a_check_every_candidate_fails_is_doubted_and_weighed_by_the_judge(pg_db):
    """The check writer misread the request (it expects Chloe's refunded 10 as paid): the minimal edit fails the
    example and is refuted by it, without a judge call; the independently written rewrite fails it too, so the
    check is doubted: the judge hears that and decides, instead of the check refuting every candidate."""
    misread = {
        **EXAMPLE,
        "expected": {"columns": ["name", "paid"], "rows": [["Ada", "120.50"], ["Bob", 99.99], ["Chloe", 10]]},
    }
    prompts: list[str] = []

    def judge(messages):
        prompts.append("\n".join(m["content"] for m in messages))
        return scores(9, "Chloe paid nothing: the check counts a refund as paid")

    calls: list[str] = []
    script = leaf_script({"checks": [COLUMNS, misread]}, MINIMAL, REWRITE, calls=calls, JudgeScores=judge)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)
    first = run.tree.nodes[run.tree.root]
    assert first.status == "refuted" and first.verdict.method == "checks"  # nothing to doubt it against yet
    assert calls.count("JudgeScores") == 1
    (prompt,) = prompts
    assert "c2 example FAILED" in prompt and "(doubted: every candidate so far fails it)" in prompt
    assert 'A check marked "doubted"' in prompt
    assert run.status == "solved" and run.final_sql == REWRITE, run.render_text()
    chosen = run.tree.nodes[run.final_node]
    assert chosen.verdict.method == "llm" and chosen.verdict.passed and not chosen.verdict.confirmed


def test_a_check_some_candidate_passes_is_never_doubted(pg_db):
    """The example refutes the minimal edit; the rewrite passes it: no doubt, the judge prompt says nothing of it."""
    prompts: list[str] = []
    script = leaf_script(
        {"checks": [COLUMNS, EXAMPLE]},
        MINIMAL,
        REWRITE,
        JudgeScores=lambda m: prompts.append("\n".join(x["content"] for x in m)) or scores(9, "ok"),
    )
    repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)
    assert prompts and not any("doubted" in p for p in prompts)


def test_examples_rows_go_into_a_copy_never_into_the_users_database(pg_db):
    example = {
        "kind": "example",
        "why": "a new customer Dee with one paid order of 5 gets 5",
        "setup": [
            {"table": "customers", "columns": ["id", "name"], "rows": [[40, "Dee"]]},
            {
                "table": "orders",
                "columns": ["id", "customer_id", "status", "total"],
                "rows": [[41, 40, "paid", 5], [42, 40, "refunded", "7"]],
            },
        ],
        "expected": {"rows": [["Ada", 120.5], ["Bob", 99.99], ["Chloe", 0], ["Dee", 5]]},
    }
    script = leaf_script({"checks": [example]}, REWRITE)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)
    assert run.status == "solved" and run.verdict.confirmed is True
    assert run.tree.nodes[run.final_node].verdict.checks[0].status == "passed"
    assert pg_db.execute("SELECT count(*) FROM customers").rows == [[3]]
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_a_check_that_cannot_run_is_reported_never_passed(pg_db):
    """Strict policy on a live database: no copy is made, so the example (which needs its own rows) could not
    run; the column check reads the candidate's own execution. Nothing confirms the candidate."""
    bad_rows = {
        "kind": "edge",
        "why": "refunds",
        "setup": [{"table": "orders", "columns": ["colour"], "rows": [["red"]]}],
        "expected": {"rows": [["Ada", 120.5]]},
    }
    prompts: list[str] = []
    script = leaf_script(
        {"checks": [COLUMNS, bad_rows]}, REWRITE, JudgeScores=lambda m: prompts.append(user_text(m)) or scores(9, "ok")
    )
    live = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))  # no verify_copies: strict, live
    leaf = live.tree.nodes[live.tree.root]
    checks = {c.id: c for c in leaf.verdict.checks}
    assert checks["c1"].status == "passed"
    assert checks["c2"].status == "could_not_run" and "live" in checks["c2"].detail
    assert "? c2 edge could not run" in prompts[0]
    # corroborated only later, by the rewrite giving the same results; never confirmed by the check that could not run
    assert leaf.verdict.evidence == [
        "the judge approved it and n1 (direct rewrite from the request), written independently, "
        "returned the same results on every scenario"
    ]

    copies = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)
    checks = {c.id: c for c in copies.tree.nodes[copies.tree.root].verdict.checks}
    assert checks["c2"].status == "could_not_run" and "has no column 'colour'" in checks["c2"].detail


def keeps_every_customer(best: str, prompts: list[str]):
    """A comparison reply (recording each prompt) that finds ``best`` right and the other candidate wrong."""
    other = "B" if best == "A" else "A"

    def compare(messages):
        prompts.append(user_text(messages))
        return {
            "verdicts": [
                {"label": best, "right": True, "reason": "lists every customer, 0 when nothing was paid"},
                {"label": other, "right": False, "reason": "drops customers without paid orders"},
            ],
            "best": best,
            "reason": f"{best} keeps every customer",
        }

    return compare


def test_two_candidates_with_different_results_are_compared_on_the_differing_rows(pg_db):
    """No example: the minimal edit is approved but unconfirmed; the direct rewrite differs on the probe rows;
    the comparison sees exactly those rows and picks the rewrite."""
    probe = [
        {"table": "customers", "columns": ["id", "name"], "rows": [[50, "Eve"]]},
        {"table": "orders", "columns": ["id", "customer_id", "status", "total"], "rows": [[51, 50, "refunded", 8]]},
    ]
    compare_prompts: list[str] = []
    calls: list[str] = []
    compare = keeps_every_customer("B", compare_prompts)

    script = leaf_script(
        {"checks": [COLUMNS], "probe_rows": probe},
        MINIMAL,
        REWRITE,
        calls=calls,
        JudgeScores=scores(8, "plausible"),
        ComparisonReply=compare,
    )
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "JudgeScores", "GeneratedSQL", "ComparisonReply"]
    prompt = compare_prompts[0]
    assert "On the sample data, their outputs differ" in prompt and "rows only B returns: (Chloe, 0)" in prompt
    assert "On the data with probe rows added" in prompt and "(Eve, 0)" in prompt
    assert "Candidate A (minimal edit of the original)" in prompt and MINIMAL in prompt
    assert "Candidate B (direct rewrite from the request)" in prompt
    assert run.status == "solved" and run.final_sql == REWRITE
    a, b = run.tree.nodes["n0"], run.tree.nodes[run.final_node]
    assert a.status == "refuted" and "the comparison found it wrong" in a.verdict.reasons[0]
    # the comparison chose it, but no check the original fails confirms it: approved and unconfirmed
    assert b.status == "accepted" and b.verdict.method == "comparison" and b.verdict.passed
    assert not b.verdict.confirmed and "chosen over n0 (A)" in b.verdict.evidence[0]
    assert run.alternatives == []  # the comparison saw both side by side and found n0 wrong: settled


def test_agreeing_candidates_confirm_each_other_once_the_judge_approves_both(pg_db):
    calls: list[str] = []
    # the minimal edit kept a join the request does not need: same rows, more SQL
    extra_join = REWRITE.replace("GROUP BY", "LEFT JOIN customers c2 ON c2.id = c.id GROUP BY")
    script = leaf_script({"checks": []}, extra_join, REWRITE, calls=calls)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    # no comparison: the results agree; the judge hears of the agreement and approves the rewrite too
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "JudgeScores", "GeneratedSQL", "JudgeScores"]
    assert run.status == "solved"
    rewrite = run.tree.nodes["n1"]
    assert rewrite.verdict.method == "llm" and "n0 (minimal edit" in rewrite.verdict.evidence[0]
    n0 = run.tree.nodes["n0"].verdict
    assert n0.corroborated is True and n0.confirmed is False  # agreement corroborates; it does not verify
    assert run.final_sql == REWRITE and rewrite.status == "accepted"  # both corroborated: the one doing no more wins
    assert run.tree.nodes["n0"].status == "done"


def test_state_after_dml_is_checked_in_copies(pg_db_factory):
    """A DELETE under the sandbox policy: the state check's read query runs after each candidate in its own copy."""
    db = pg_db_factory(SHOP_SETUP, writable=True)
    state = {
        "kind": "state",
        "why": "remove cancelled orders",
        "query": "SELECT status FROM orders ORDER BY id",
        "expected": {"rows": [["paid"], ["refunded"], ["paid"]], "ordered": True},
    }
    script = leaf_script(
        {"checks": [state]},
        "DELETE FROM orders WHERE status <> 'paid'",
        "DELETE FROM orders WHERE status = 'cancelled'",
    )
    run = repair(
        "Delete the cancelled orders",
        "DELETE FROM orders WHERE status = 'canceled'",
        db,
        model=ScriptedChatModel(script),
        policy=Policy.sandbox(),
    )
    first = run.tree.nodes["n0"]
    assert first.status == "refuted" and "missing (refunded)" in first.verdict.checks[0].detail
    assert run.status == "solved" and run.final_sql == "DELETE FROM orders WHERE status = 'cancelled'"
    assert run.original_checks.result("c1").status == "failed"  # the typo deletes nothing
    assert db.execute("SELECT count(*) FROM orders").rows == [[4]]  # the task database is untouched


def test_budget_ends_the_run_before_the_verification_sibling(pg_db):
    script = leaf_script({"checks": [COLUMNS]}, REWRITE)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), budget=Budget(max_nodes=1))
    assert run.status == "best_effort" and any("budget exhausted (1 nodes)" in n for n in run.notes)
    assert run.final_sql == REWRITE and len(run.tree.executed()) == 1
    pending = [n for n in run.tree.nodes.values() if n.status == "pending"]
    assert [n.input for n in pending] == [{"strategy": "rewrite"}]  # planned, never run


def test_linear_mode_accepts_an_unconfirmed_candidate_without_a_sibling(pg_db):
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(leaf_script({"checks": []}, REWRITE)), mode="linear")
    assert run.status == "solved" and len(run.tree.nodes) == 1
    assert run.tree.nodes[run.final_node].status == "unconfirmed"
    assert any("no check the original fails confirmed it" in n for n in run.notes)


def test_malformed_checks_are_recorded_and_the_run_goes_on(pg_db):
    # twice: the repair round gets the same answer
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(leaf_script({"checks": [{"kind": "telepathy"}]}, REWRITE)))
    assert any(f.get("phase") == "checks" and f.get("schema") == "CheckPlan" for f in run.model_failures)
    assert any("no checks could be written" in n for n in run.notes)
    assert run.checks is None and run.status == "solved" and run.final_sql == REWRITE


SPEED_SETUP = [
    "CREATE TABLE events (id int PRIMARY KEY, kind text, user_id int)",
    (
        "INSERT INTO events SELECT g, CASE WHEN g % 3 = 0 THEN 'view' ELSE 'click' END, g % 500 "
        "FROM generate_series(1, 20000) g"
    ),
    "ANALYZE events",
]
SLOW = "SELECT id, kind FROM events WHERE user_id = 42 ORDER BY id"
INDEXED = ["CREATE INDEX events_user ON events (user_id)", SLOW]
TRUNCATED = ["CREATE INDEX events_user ON events (user_id)", SLOW + " LIMIT 10"]


def test_speed_request_plans_are_explained_in_copies_and_shown_to_the_judge(pg_db_factory):
    db = pg_db_factory(SPEED_SETUP, writable=True)
    judge_prompts: list[str] = []
    script = leaf_script(
        {"about_speed": True, "same_result_as_original": True, "checks": []},
        TRUNCATED,
        INDEXED,
        JudgeScores=lambda m: (
            judge_prompts.append("\n".join(x["content"] for x in m)) or scores(9, "same rows, index scan")
        ),
    )
    run = repair(
        "This query is slow on the events of user 42; the results are right, make it faster.",
        SLOW,
        db,
        model=ScriptedChatModel(script),
        policy=Policy.sandbox(),
    )
    plans = {c.id: c for c in run.checks.all_checks()}
    assert set(plans) == {"plan", "same"}
    first = run.tree.nodes["n0"]  # faster only because it returns 10 of the 40 rows
    assert first.status == "refuted"
    results = {c.id: c for c in first.verdict.checks}
    assert (
        results["same"].status == "failed" and "differs from the original's (10 vs 40 row(s))" in results["same"].detail
    )
    chosen = run.tree.nodes[run.final_node]
    assert run.status == "solved" and run.final_sql_statements == INDEXED
    results = {c.id: c for c in chosen.verdict.checks}
    assert results["same"].status == "passed" and results["plan"].status == "passed"
    assert re.search(r"estimated cost [\d.]+ < the original's [\d.]+", results["plan"].detail)
    assert chosen.verdict.confirmed and any(e.startswith("plan estimated cost") for e in chosen.verdict.evidence)
    prompt = judge_prompts[0]
    assert "Plan of the original SQL (EXPLAIN, no ANALYZE):" in prompt and "Seq Scan on events" in prompt
    assert "Index Scan" in prompt.split("Plan of this SQL:")[1]  # the candidate's plan uses the new index
    assert "The request is about speed" in prompt
    assert db.execute("SELECT count(*) FROM pg_indexes WHERE tablename = 'events'").rows == [[1]]  # only the pkey


def test_the_judge_hears_when_a_refuted_candidate_returned_the_same_rows(pg_db):
    prompts: list[str] = []

    def judge(messages):
        prompts.append(user_text(messages))
        return scores(3, "drops Chloe") if len(prompts) == 1 else scores(9, "ok")

    script = leaf_script({"checks": []}, REWRITE.replace("COALESCE(", "coalesce("), REWRITE, JudgeScores=judge)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    assert len(prompts) == 2 and "Other evidence" not in prompts[0]
    assert (
        "- n0 (minimal edit of the original) returned the same results on every scenario and was refuted: "
        in prompts[1]
    ) and "drops Chloe" in prompts[1]
    assert run.tree.nodes[run.final_node].input == {"strategy": "rewrite"}


def rewrite_leaf_plan(messages) -> dict:
    if phase_of(messages) == "initial":
        plan = {"id": "g", "tool": "generate_sql", "input": {"strategy": "rewrite"}}
        return {"reason": "rewrite it", "cursor": "g", "plan": plan}
    return suggested(messages)


def test_an_unconfirmed_direct_rewrite_gets_a_minimal_edit_to_compare_with(pg_db):
    """The planner chose a direct rewrite; the judge approves it but no check confirms it: a minimal edit of the
    original is written beside it, and the comparison on the differing rows decides between the two."""
    calls: list[str] = []
    compared: list[str] = []
    compare = keeps_every_customer("A", compared)

    script = leaf_script(
        {"checks": [COLUMNS]},
        MINIMAL,
        REWRITE,
        calls=calls,
        PlannerReply=rewrite_leaf_plan,
        ComparisonReply=compare,
    )
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), verify_copies=True)
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "JudgeScores", "GeneratedSQL", "ComparisonReply"]
    first, second = run.tree.executed()
    assert first.input == {"strategy": "rewrite"} and second.input == {} and second.parent == first.id
    assert "Candidate A (direct rewrite from the request)" in compared[0]
    assert "Candidate B (minimal edit of the original)" in compared[0] and MINIMAL in compared[0]
    assert run.final_sql == REWRITE and run.final_node == first.id and second.status == "refuted"

    # the same minimal edit agreeing with the rewrite corroborates it; nothing is written a third time
    calls.clear()
    extra_join = REWRITE.replace("GROUP BY", "LEFT JOIN customers c2 ON c2.id = c.id GROUP BY")
    script = leaf_script({"checks": []}, extra_join, REWRITE, calls=calls, PlannerReply=rewrite_leaf_plan)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "JudgeScores", "GeneratedSQL", "JudgeScores"]
    assert run.status == "solved" and run.final_sql == REWRITE  # the shorter of two agreeing candidates
    assert run.verdict.corroborated and not run.verdict.confirmed


def test_linear_mode_writes_no_second_candidate_for_an_unconfirmed_rewrite(pg_db):
    calls: list[str] = []
    script = leaf_script({"checks": []}, MINIMAL, REWRITE, calls=calls, PlannerReply=rewrite_leaf_plan)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), mode="linear")
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "JudgeScores"]
    assert run.final_sql == REWRITE and len(run.tree.executed()) == 1


def test_two_candidates_the_judge_doubted_outvote_a_lone_approval_that_agrees_with_neither(pg_db):
    """The minimal edit and the direct rewrite return the same rows and the judge doubts both; a third candidate the
    planner adds is approved, but on the judge's reading alone and with results of its own. The two agreeing
    candidates outvote it: the shorter of them is returned, best effort, with a note saying why."""
    extra_join = REWRITE.replace("GROUP BY", "LEFT JOIN customers c2 ON c2.id = c.id GROUP BY")
    written: list[str] = []

    def generate(messages):
        written.append("rewrite" if is_rewrite(messages) else "minimal")
        return {"sql": REWRITE if is_rewrite(messages) else extra_join if len(written) == 1 else MINIMAL}

    def judge(messages):
        return scores(9, "ok") if judged_sql(messages).strip().startswith(MINIMAL) else scores(4, "not sure")

    def planner(messages):
        if phase_of(messages) == "revise" and "cursor" not in (tried := suggested(messages)):
            add = {"id": "x", "tool": "generate_sql", "description": "another reading"}
            return {"reason": "try once more", "add": [{"parent": failed_of(messages), "node": add}], "cursor": "x"}
        return tried if phase_of(messages) == "revise" else one_leaf_plan(messages)

    calls: list[str] = []
    script = leaf_script(
        {"checks": []}, MINIMAL, calls=calls, GeneratedSQL=generate, JudgeScores=judge, PlannerReply=planner
    )
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    n0, n1, lone = run.tree.executed()
    assert written == ["minimal", "rewrite", "minimal"] and lone.output.sql == MINIMAL
    assert n0.status == n1.status == "refuted" and lone.verdict.passed and not lone.verdict.corroborated
    assert run.final_node == n1.id and run.final_sql == REWRITE  # the shorter of the two agreeing
    assert run.status == "best_effort" and lone.status != "accepted" and run.outvoted == lone.id
    assert any(f"{lone.id}, approved on the judge's reading alone, agreed with neither" in n for n in run.notes)
    # the replaced choice is still a reading of its own: named, while n0 (same rows as the answer) is not
    assert run.alternatives == [lone.id] and any(f"return other rows: {lone.id} (" in n for n in run.notes)

    # the same run in linear mode keeps the judge's choice (the rule is for the tree's independent candidates)
    written.clear()
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), mode="linear")
    assert run.final_sql == MINIMAL and run.outvoted is None


def test_when_the_judge_approves_nothing_the_direct_rewrite_from_the_request_stands(pg_db):
    """The judge refutes both candidates on its reading alone, scoring the minimal edit higher. The scores of refuted
    candidates are no basis to prefer one: the direct rewrite from the request (the single-shot request) stands, best
    effort, with a note; linear mode keeps its best-scored candidate."""

    def judge(messages):
        return scores(3, "not sure") if judged_sql(messages).strip().startswith(REWRITE) else scores(5, "maybe")

    calls: list[str] = []
    script = leaf_script({"checks": []}, MINIMAL, REWRITE, calls=calls, JudgeScores=judge)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    assert calls == ["CheckPlan", "PlannerReply", "GeneratedSQL", "JudgeScores", "PlannerReply", "GeneratedSQL"] + [
        "JudgeScores",
        "PlannerReply",
    ]
    minimal, rewrite = run.tree.executed()
    assert minimal.status == rewrite.status == "refuted" and rewrite.input == {"strategy": "rewrite"}
    assert minimal.verdict.semantic_score > rewrite.verdict.semantic_score
    assert run.status == "best_effort" and run.final_node == rewrite.id and run.final_sql == REWRITE
    assert f"the direct rewrite from the request ({rewrite.id}) stands" in " ".join(run.notes)
    assert run.outvoted is None
    assert run.alternatives == []  # the judge called the minimal edit wrong: not a reading left standing

    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script), mode="linear")
    assert run.final_sql == MINIMAL


def test_readings_left_standing_beside_an_unverified_answer_are_named(pg_db):
    """The judge is unsure of both candidates, which return different rows, and no check settles it: the direct
    rewrite stands and the minimal edit is named as another reading, in a note and in ``AgentRun.alternatives``.
    A verified answer names none."""

    def unsure(messages):
        return {**scores(5, "cannot tell"), "verdict": "unsure"}

    script = leaf_script({"checks": []}, MINIMAL, REWRITE, JudgeScores=unsure)
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(script))
    minimal, rewrite = run.tree.executed()
    assert run.final_node == rewrite.id and run.status == "best_effort"
    assert run.alternatives == [minimal.id]
    note = next(n for n in run.notes if n.startswith("other readings"))
    assert f"{minimal.id} (minimal edit of the original)" in note and f"if {rewrite.id} is not what you meant" in note
    assert AgentRun.model_validate_json(run.model_dump_json()).alternatives == [minimal.id]

    # a minimal edit that returns the same rows as the answer is not another reading
    same_rows = REWRITE.replace("GROUP BY", "LEFT JOIN customers c2 ON c2.id = c.id GROUP BY")
    run = repair(
        INTENT, BAD, pg_db, model=ScriptedChatModel(leaf_script({"checks": []}, same_rows, REWRITE, JudgeScores=unsure))
    )
    assert run.final_sql == REWRITE and len(run.tree.executed()) == 2 and run.alternatives == []

    # the example in the request verifies the rewrite (the minimal edit fails it): nothing else is offered
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(leaf_script({"checks": [EXAMPLE]}, MINIMAL, REWRITE)))
    assert run.final_sql == REWRITE and run.tree.nodes[run.final_node].verdict.confirmed
    assert run.alternatives == [] and not any(n.startswith("other readings") for n in run.notes)
