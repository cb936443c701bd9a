"""The LLM and hybrid tools with a scripted model, executing against the real database."""

from __future__ import annotations

import pytest
from agent_scripts import scores, user_text

from actsagent.llm import ScriptedChatModel, StructuredOutputError
from actsagent.tools import (
    DetectAmbiguitiesInput,
    GenerateSqlInput,
    JudgeInput,
    RunSqlInput,
    ToolContext,
    detect_ambiguities,
    generate_sql,
    judge,
    run_sql,
)


def test_detect_ambiguities_parses_and_caps(pg_db):
    report = {
        "ambiguities": [
            {"phrase": f"p{i}", "interpretations": [{"description": "a"}, {"description": "b"}]} for i in range(5)
        ]
    }
    ctx = ToolContext(db=pg_db, model=ScriptedChatModel([report]))
    out = detect_ambiguities(DetectAmbiguitiesInput(intent="big orders", sql="SELECT 1", max_ambiguities=2), ctx)
    assert [a.phrase for a in out.ambiguities] == ["p0", "p1"]
    assert "(1) a | (2) b" in out.summary()
    prompt = user_text(ctx.model.calls[0].messages)
    assert "big orders" in prompt and "customers" in prompt  # intent and schema reach the model


def test_detect_ambiguities_malformed_raises_model_error(pg_db):
    ctx = ToolContext(db=pg_db, model=ScriptedChatModel(["nope", "still nope"]))
    with pytest.raises(StructuredOutputError):
        detect_ambiguities(DetectAmbiguitiesInput(intent="x"), ctx)


def test_generate_sql_with_model_runs_the_candidate(pg_db):
    ctx = ToolContext(
        db=pg_db,
        model=ScriptedChatModel(
            [{"sql": "```sql\nSELECT name FROM customers WHERE country = 'FR';\n```", "rationale": "r"}]
        ),
    )
    out = generate_sql(
        GenerateSqlInput(
            intent="French customers",
            original_sql="SELECT nam FROM customers",
            hypothesis="country code FR",
            evidence=["[n0] run_sql: ERROR"],
        ),
        ctx,
    )
    assert out.source == "llm" and out.sql == "SELECT name FROM customers WHERE country = 'FR'"
    assert out.execution.ok and out.execution.last.rows == [["Chloe"]]
    prompt = user_text(ctx.model.calls[0].messages)
    assert "country code FR" in prompt and "[n0] run_sql: ERROR" in prompt


def test_generate_sql_without_model_uses_the_draft(pg_db):
    out = generate_sql(
        GenerateSqlInput(intent="x", original_sql="SELECT nam FROM customers", draft_sql="SELECT name FROM customers"),
        ToolContext(db=pg_db),
    )
    assert out.source == "draft" and out.execution.ok


def test_judge_scores_and_decides(pg_db):
    ctx = ToolContext(db=pg_db, model=ScriptedChatModel([scores(9, "fine"), scores(8, "ok", entail=3)]))
    ex = run_sql(RunSqlInput(sql="SELECT name FROM customers"), ctx)
    good = judge(JudgeInput(intent="customer names", sql="SELECT name FROM customers", execution=ex), ctx)
    assert good.passed and good.method == "llm" and good.semantic_score == 9.0
    bad = judge(JudgeInput(intent="customer names", sql="SELECT name FROM customers", execution=ex), ctx)
    assert not bad.passed and bad.entailment_score == 3  # entailment below threshold fails it


def test_judge_fails_non_executing_sql_without_asking(pg_db):
    ctx = ToolContext(db=pg_db, model=ScriptedChatModel([]))
    ex = run_sql(RunSqlInput(sql="SELECT nope FROM customers"), ctx)
    v = judge(JudgeInput(intent="x", sql="SELECT nope FROM customers", execution=ex), ctx)
    assert not v.passed and "does not execute" in v.reasons[0] and ctx.model.calls == []


def test_judge_without_model_checks_execution_only(pg_db):
    ctx = ToolContext(db=pg_db)
    ex = run_sql(RunSqlInput(sql="SELECT name FROM customers WHERE false"), ctx)
    v = judge(JudgeInput(intent="x", sql="q", execution=ex), ctx)
    assert v.method == "execution_only" and not v.passed and "no rows" in v.reasons[0]


def test_judge_sees_the_row_counts_of_the_tables_read(pg_db_factory):
    db = pg_db_factory(
        [
            "CREATE TABLE loan (id INT, amount INT)",
            "INSERT INTO loan VALUES (1, 10), (2, 20)",
            "CREATE TABLE big (id INT)",
            "INSERT INTO big SELECT g FROM generate_series(1, 40) g",
            "ANALYZE big",
            "ANALYZE loan",
        ]
    )
    ctx = ToolContext(db=db, model=ScriptedChatModel([scores(8, "the filter is right")]))
    sql = "WITH l AS (SELECT * FROM loan WHERE amount > 100) SELECT l.id FROM l JOIN big b ON b.id = l.id"
    ex = run_sql(RunSqlInput(sql=sql), ctx)
    assert ex.ok and ex.last.empty
    v = judge(JudgeInput(intent="loans over 100", sql=sql, execution=ex), ctx)
    assert v.passed
    messages = ctx.model.calls[0].messages
    prompt = user_text(messages)
    listed = prompt.split("Rows in the tables read:\n")[1].split("\n\n")[0].splitlines()
    assert sorted(listed) == ["- big: 40", "- loan: 2 (nearly empty)"]  # the CTE l is no table
    assert "An empty result is not evidence against the SQL" in messages[0]["content"]
