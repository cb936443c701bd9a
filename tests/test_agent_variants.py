"""The comparison variants, ask (text-to-SQL), and sandbox repair of statement lists."""

from __future__ import annotations

from agent_scripts import judged_sql, scores, user_text

from actsagent.agent import ask, repair
from actsagent.db.sandbox import sandbox
from actsagent.graphs.models import Budget
from actsagent.guard import Policy
from actsagent.llm import ScriptedChatModel


def test_regenerate_sends_the_error_back_at_most_n_times(pg_db):
    answers = [{"sql": "SELECT nam FROM customers"}, {"sql": "SELECT name FROM customers ORDER BY name"}]
    model = ScriptedChatModel(answers)
    run = repair("customer names", "SELECT nme FROM customers", pg_db, model=model, mode="regenerate")
    assert run.status == "best_effort" and run.final_sql == "SELECT name FROM customers ORDER BY name"
    assert [n.tool for n in run.tree.executed()] == ["run_sql", "generate_sql", "generate_sql"]
    second_prompt = user_text(model.calls[1].messages)
    assert "SELECT nam FROM customers" in second_prompt and "unknown_column" in second_prompt


def test_regenerate_gives_up_after_budget(pg_db):
    model = ScriptedChatModel(lambda m, r, rm: {"sql": "SELECT nope FROM customers"})
    run = repair(
        "customer names",
        "SELECT nme FROM customers",
        pg_db,
        model=model,
        mode="regenerate",
        budget=Budget(max_regenerations=2),
    )
    assert run.status == "failed" and len(run.tree.executed()) == 3 and len(model.calls) == 2


def test_single_shot_is_one_call(pg_db):
    model = ScriptedChatModel([{"sql": "SELECT name FROM customers"}])
    run = repair("customer names", "SELECT nme FROM customers", pg_db, model=model, mode="single_shot")
    assert run.usage.llm_calls == 1 and run.final_sql == "SELECT name FROM customers" and run.result.ok


def test_ask_drafts_then_debugs(pg_db):
    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "GeneratedSQL" and "Question:" in user_text(messages):
            return {"sql": "SELECT COUNT(*) FROM customer"}  # draft with a wrong table name
        if name == "PlannerReply":
            return {
                "cursor": "r",
                "plan": {"id": "r", "tool": "run_sql", "children": [{"id": "g", "tool": "generate_sql"}]},
            }
        if name == "GeneratedSQL":
            return {"sql": "SELECT COUNT(*) FROM customers"}
        if name == "CheckPlan":
            return {"checks": [{"kind": "row_count", "why": "how many", "relation": "exactly", "count": 1}]}
        return scores(9)

    run = ask("How many customers are there?", pg_db, model=ScriptedChatModel(script))
    assert run.status == "solved" and run.result.rows == [[3]]
    assert run.original_sql == "SELECT COUNT(*) FROM customer"
    assert run.original_checks.result("c1").status == "failed"  # the draft does not run
    # draft, checks, plan, generate, judge, then the direct rewrite that agrees with the candidate, judged too
    assert run.usage.llm_calls == 7 and run.verdict.corroborated and not run.verdict.confirmed


def _ask_script(draft: str, judge_of):
    """ask's scripted model: ``draft`` first, then the judge's reply for the SQL it judges; the planner and a
    second generation answer too, so a test sees whether they were asked at all."""

    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "GeneratedSQL" and "Question:" in user_text(messages):
            return {"sql": draft}
        if name == "PlannerReply":
            return {"cursor": "g", "plan": {"id": "g", "tool": "generate_sql"}}
        if name == "GeneratedSQL":
            return {"sql": "SELECT COUNT(DISTINCT name) FROM customers"}
        if name == "CheckPlan":
            return {"checks": []}
        return judge_of(judged_sql(messages))

    return script


def test_ask_accepts_a_first_draft_the_judge_approves_without_revising_it(pg_db):
    model = ScriptedChatModel(_ask_script("SELECT COUNT(*) FROM customers", lambda sql: scores(9)))
    run = ask("How many customers are there?", pg_db, model=model)
    assert run.status == "solved" and run.final_sql == "SELECT COUNT(*) FROM customers" and run.result.rows == [[3]]
    assert [(n.tool, n.status) for n in run.tree.executed()] == [("generate_sql", "accepted")]
    names = [c.response_model for c in model.calls]
    assert "PlannerReply" not in names and names.count("GeneratedSQL") == 1  # draft, checks, judge: nothing else


def test_ask_revises_a_first_draft_the_judge_does_not_approve(pg_db):
    def judge_of(sql: str) -> dict:
        return scores(3) if "COUNT(*)" in sql else scores(9)

    model = ScriptedChatModel(_ask_script("SELECT COUNT(*) FROM customers", judge_of))
    run = ask("How many distinct customer names are there?", pg_db, model=model)
    assert run.final_sql == "SELECT COUNT(DISTINCT name) FROM customers"
    first, *rest = run.tree.executed()
    assert first.status == "refuted" and rest and rest[-1].tool == "generate_sql"
    assert run.status == "solved" and run.verdict.passed
    names = [c.response_model for c in model.calls]
    assert names.index("PlannerReply") > names.index("JudgeScores")  # the planner is asked only after the refutation


def test_an_interactive_ask_plans_before_judging_its_draft(pg_db):
    model = ScriptedChatModel(_ask_script("SELECT COUNT(*) FROM customers", lambda sql: scores(9)))
    ask("How many customers are there?", pg_db, model=model, interactive=True)
    assert model.calls and any(c.response_model == "PlannerReply" for c in model.calls)


def test_escalate_judges_the_direct_rewrite_before_any_plan(pg_db):
    model = ScriptedChatModel(_ask_script("unused", lambda sql: scores(9)))
    run = repair(
        "how many distinct customer names", "SELECT COUNT(name) FROM customer", pg_db, model=model, mode="escalate"
    )
    assert run.status == "solved" and run.final_sql == "SELECT COUNT(DISTINCT name) FROM customers"
    assert [(n.tool, n.status) for n in run.tree.executed()] == [("generate_sql", "accepted")]
    assert "PlannerReply" not in [c.response_model for c in model.calls]
    assert run.tree.executed()[0].output.strategy == "rewrite"  # the single-shot request, judged first


def test_escalate_hands_a_refuted_rewrite_to_the_planner(pg_db):
    def judge_of(sql: str) -> dict:
        return scores(3) if "DISTINCT" in sql else scores(9)

    model = ScriptedChatModel(_ask_script("unused", judge_of))
    run = repair(
        "how many distinct customer names", "SELECT COUNT(name) FROM customer", pg_db, model=model, mode="escalate"
    )
    names = [c.response_model for c in model.calls]
    assert run.tree.executed()[0].status == "refuted" and "PlannerReply" in names
    assert names.index("PlannerReply") > names.index("JudgeScores")


def test_escalate_keeps_the_rewrite_when_no_alternative_is_approved_either(pg_db):
    rewrite, edit = "SELECT COUNT(DISTINCT name) FROM customers", "SELECT COUNT(name) FROM customers"

    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "GeneratedSQL":  # the single-shot request first, then the planner's minimal edits
            return {"sql": rewrite if "You fix" in messages[0]["content"] else edit}
        if name == "PlannerReply":
            return {"add": [{"parent": "n0", "node": {"id": "e", "tool": "generate_sql"}}], "cursor": "e"}
        if name == "CheckPlan":
            return {"checks": []}
        return scores(3)  # the judge approves nothing

    model = ScriptedChatModel(script)
    run = repair(
        "how many distinct customer names", "SELECT COUNT(name) FROM customer", pg_db, model=model, mode="escalate"
    )
    tried = [n.output.sql for n in run.tree.executed() if n.tool == "generate_sql"]
    assert edit in tried and rewrite in tried  # the planner's alternative was tried and refuted too
    assert run.status == "best_effort" and run.final_sql == rewrite


def test_sandbox_repair_of_a_statement_list(pg_db):
    """BIRD-CRITIC shape: issue_sql is a list with DDL/DML; the answer is a list; the sandbox is untouched."""
    issue = [
        "CREATE TABLE vip (customer_id INT)",
        "INSERT INTO vip SELECT id FROM customer WHERE country = 'DE'",
        "SELECT count(*) FROM vip",
    ]
    fixed = [issue[0], "INSERT INTO vip SELECT id FROM customers WHERE country = 'DE'", issue[2]]

    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "PlannerReply":
            return {
                "cursor": "r",
                "plan": {"id": "r", "tool": "run_sql", "children": [{"id": "g", "tool": "generate_sql"}]},
            }
        if name == "GeneratedSQL":
            assert "list of statements" in messages[0]["content"]
            return {"sql": fixed}
        return scores(9)

    with sandbox(pg_db) as box:
        run = repair(
            "copy German customers into vip", issue, box, model=ScriptedChatModel(script), policy=Policy.sandbox()
        )
        assert run.status == "solved" and run.final_sql_statements == fixed
        assert run.result.ok and run.result.rows == [[1]]
        assert not box.execute("SELECT to_regclass('vip') IS NOT NULL").rows[0][0]  # tried in copies only


def _second_chance_script(best: str):
    """The judge refutes the draft on its reading alone and approves the planner's alternative; the comparison of
    the two (labels in the order written: A the draft, B the alternative) then names ``best``."""

    def judge_of(sql: str) -> dict:
        return scores(3) if "country" not in sql else scores(9)

    inner = _ask_script("SELECT COUNT(*) FROM customers", judge_of)

    def script(messages, role, response_model):
        if response_model.__name__ == "GeneratedSQL" and "Question:" not in user_text(messages):
            return {"sql": "SELECT COUNT(*) FROM customers WHERE country = 'DE'"}  # different rows from the draft
        if response_model.__name__ == "ComparisonReply":
            assert "First draft written from the question" in user_text(messages)  # not called faulty
            assert "Earlier single judgement" not in user_text(messages)  # the draft's refutation is not shown
            return {
                "verdicts": [{"label": "A", "right": best == "A"}, {"label": "B", "right": best == "B"}],
                "best": best,
                "reason": "the differing rows",
            }
        return inner(messages, role, response_model)

    return script


def test_a_draft_refuted_on_the_judges_reading_alone_is_compared_with_its_replacement_and_can_stay(pg_db):
    model = ScriptedChatModel(_second_chance_script("A"))
    run = ask("How many customers are there?", pg_db, model=model)
    names = [c.response_model for c in model.calls]
    assert names.count("ComparisonReply") == 1 and names.index("ComparisonReply") > names.index("PlannerReply")
    assert run.final_sql == "SELECT COUNT(*) FROM customers" and run.status == "solved"
    assert run.verdict.method == "comparison"


def test_an_unconfirmed_replacement_preferred_in_the_comparison_does_not_replace_a_draft_that_runs(pg_db):
    model = ScriptedChatModel(_second_chance_script("B"))
    run = ask("How many customers are there in Germany?", pg_db, model=model)
    assert [c.response_model for c in model.calls].count("ComparisonReply") == 1
    assert run.final_sql == "SELECT COUNT(*) FROM customers" and run.status == "best_effort"
    assert any("the draft stands" in n for n in run.notes)
    alternative = run.tree.executed()[-1]
    assert alternative.output.sql == "SELECT COUNT(*) FROM customers WHERE country = 'DE'"  # tried, shown, not chosen


def test_a_draft_refuted_by_a_failed_check_gets_no_second_chance(pg_db):
    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "CheckPlan":  # the draft's single row fails a check written from the question
            return {"checks": [{"kind": "row_count", "why": "one per name", "relation": "at_least", "count": 2}]}
        if name == "GeneratedSQL" and "Question:" in user_text(messages):
            return {"sql": "SELECT COUNT(*) FROM customers"}
        if name == "PlannerReply":
            return {"cursor": "g", "plan": {"id": "g", "tool": "generate_sql"}}
        if name == "GeneratedSQL":
            return {"sql": "SELECT name, COUNT(*) FROM customers GROUP BY name"}
        return scores(9)

    model = ScriptedChatModel(script)
    run = ask("How many customers has each name?", pg_db, model=model)
    assert "ComparisonReply" not in [c.response_model for c in model.calls]
    assert run.final_sql == "SELECT name, COUNT(*) FROM customers GROUP BY name"
    assert run.tree.executed()[0].status == "refuted"
