"""The prompts of ask, generate_sql and the judge take their schema context from the knowledge base
when the schema is too large to show whole (or always, on request); a small database's prompts do not
change. Real SQLite databases, the offline embedding model, scripted chat models."""

from __future__ import annotations

import pytest
from agent_scripts import scores, user_text
from engines import sqlite_file
from test_kb import CLUB  # the club database with obscure names (mbr, cntry, evt, ...)

from actsagent import kb
from actsagent.agent import ask
from actsagent.db.sqlite import SqliteDatabase
from actsagent.errors import UserError
from actsagent.kb.store import default_file
from actsagent.llm import ScriptedChatModel
from actsagent.tools import (
    GenerateSqlInput,
    JudgeInput,
    RunSqlInput,
    SchemaSource,
    ToolContext,
    generate_sql,
    judge,
    run_sql,
)

# four unrelated tables make it ten: too large to show whole (tools._schema_context.SMALL_TABLES)
EXTRA = [
    "CREATE TABLE wthr_lg (lg_id INTEGER PRIMARY KEY, obs_dt TEXT, rnfl_mm REAL, tmp_c REAL)",
    "CREATE TABLE invntry (sku TEXT PRIMARY KEY, qty_on_hnd INTEGER, whs_cd TEXT)",
    "CREATE TABLE shpmnt (shp_id INTEGER PRIMARY KEY, crr_nm TEXT, wgt_kg REAL)",
    "CREATE TABLE pyrl (emp_no INTEGER PRIMARY KEY, slry_amt REAL, pay_grd TEXT)",
    "INSERT INTO wthr_lg VALUES (1, '2019-04-02', 3.5, 11.0)",
    "INSERT INTO invntry VALUES ('A-1', 4, 'W1')",
]
QUESTION = "Which members from Norway attended the event April Speaker?"
ANSWER = (
    "SELECT m.fnm FROM mbr m JOIN att a ON a.lnk_mbr = m.mbr_id JOIN evt e ON e.evt_id = a.lnk_evt "
    "WHERE m.cntry = 'Norway' AND e.evt_nm = 'April Speaker'"
)
KB_HEADER = "a knowledge base retrieved for this request"


@pytest.fixture
def large(tmp_path):
    db = SqliteDatabase(sqlite_file(tmp_path / "large.sqlite", CLUB + EXTRA))
    yield db
    db.close()


@pytest.fixture
def small(tmp_path):
    db = SqliteDatabase(sqlite_file(tmp_path / "small.sqlite", CLUB))
    yield db
    db.close()


def recorder(prompts: list[str]):
    """A scripted model answering every SQL request with ANSWER and recording each user prompt."""

    def script(messages, role, response_model):
        prompts.append(user_text(messages))
        if response_model.__name__ == "JudgeScores":
            return scores(9, "ok")
        return {"sql": ANSWER, "rationale": "scripted"}

    return ScriptedChatModel(script)


def test_ask_on_a_large_schema_with_a_knowledge_base_shows_its_retrieval(large):
    kb.build(large)
    prompts: list[str] = []
    run = ask(QUESTION, large, model=recorder(prompts), mode="single_shot", kb_budget=700)
    assert run.final_sql == ANSWER
    assert len(prompts) == 1  # single-shot: the one generation, its schema from the knowledge base
    for p in prompts:
        assert KB_HEADER in p and "of the database's 10 tables" in p
        assert "Table mbr" in p and "Table evt" in p and "Table att" in p  # att joins them
        assert "cntry text -- country" in p  # a description the plain listing does not have
        assert "Table pyrl" not in p and "Table shpmnt" not in p  # unrelated, and the budget is small
    # the same question with the listing forced: the whole catalog, no descriptions
    listed: list[str] = []
    ask(QUESTION, large, model=recorder(listed), mode="single_shot", schema_source="listing")
    assert KB_HEADER not in listed[0] and "Schema (all 10 tables):" in listed[0]
    assert "Table pyrl" in listed[0] and "-- country" not in listed[0]


def test_a_large_schema_without_a_knowledge_base_keeps_the_listing(large):
    prompts: list[str] = []
    ask(QUESTION, large, model=recorder(prompts), mode="single_shot")
    assert KB_HEADER not in "\n".join(prompts)
    assert "Schema (all 10 tables):" in prompts[0]  # the first draft sees the whole listing
    assert not default_file(large).exists()  # auto never builds one


def test_a_small_schema_prompt_is_unchanged_unless_the_kb_is_asked_for(small):
    kb.build(small)
    auto: list[str] = []
    ask(QUESTION, small, model=recorder(auto), mode="single_shot")
    listed: list[str] = []
    ask(QUESTION, small, model=recorder(listed), mode="single_shot", schema_source="listing")
    assert auto == listed and KB_HEADER not in auto[0]
    forced: list[str] = []
    ask(QUESTION, small, model=recorder(forced), mode="single_shot", schema_source=SchemaSource.KB, kb_budget=500)
    assert all(KB_HEADER in p and "of the database's 6 tables" in p for p in forced)
    assert "Table mbr" in forced[0] and "Table k12" not in forced[0]


def test_generate_sql_and_the_judge_retrieve_for_their_intent_and_sql(small):
    prompts: list[str] = []
    ctx = ToolContext(db=small, model=recorder(prompts), schema_source=SchemaSource.KB, kb_budget=1500)
    sql = "SELECT cnt_k12 FROM k12"  # a draft naming a table the question does not point at
    generate_sql(GenerateSqlInput(intent=QUESTION, original_sql=sql), ctx)
    judge(JudgeInput(intent=QUESTION, sql=sql, execution=run_sql(RunSqlInput(sql=sql), ctx)), ctx)
    assert len(prompts) == 2
    for p in prompts:
        assert KB_HEADER in p
        assert "Table k12" in p  # the SQL's tables are always in the context
        assert "Table mbr" in p and "-- country" in p  # the question's tables, with their descriptions
    assert default_file(small).is_file()  # `kb` builds the knowledge base on first use


def test_a_given_retriever_is_used_and_bad_settings_are_refused(large, tmp_path):
    path = tmp_path / "kb.json"
    kb.build(large, path=path)
    ctx = ToolContext(db=large, kb=kb.retriever(large, path=path), kb_budget=400)
    got = ctx.schema_vars(intent=QUESTION, sql=ANSWER)
    assert got["schema_source"] == "kb" and len(str(got["schema"])) <= 400 and got["schema_total"] == 10
    assert "Table evt" in str(got["schema"])
    assert ctx.schema_vars()["schema_total"] == 10 and "schema_source" not in ctx.schema_vars()  # no intent: listing
    listing = ToolContext(db=large, kb=ctx.kb, schema_source=SchemaSource.LISTING)
    assert "schema_source" not in listing.schema_vars(intent=QUESTION)
    with pytest.raises(UserError, match="schema source"):
        ask(QUESTION, large, model=recorder([]), schema_source="everything")
    with pytest.raises(UserError, match="at least 200"):
        ask(QUESTION, large, model=recorder([]), kb_budget=50)


def test_ask_cli_kb_flag_turns_the_knowledge_base_on_and_off(small, monkeypatch):
    from test_bench_ask import script_for
    from typer.testing import CliRunner

    import actsagent.llm
    from actsagent.cli import app

    seen: list[str] = []
    monkeypatch.setattr(
        actsagent.llm, "get_chat_model", lambda *a, **k: ScriptedChatModel(script_for({QUESTION: ANSWER}, seen))
    )
    res = CliRunner().invoke(app, ["ask", QUESTION, "--db", str(small.path), "--kb", "--json"])
    assert res.exit_code == 0, res.output
    with_schema = [s for s in seen if "Table mbr" in s]
    assert len(with_schema) >= 2 and all(KB_HEADER in s for s in with_schema)  # the draft and the tree's prompts
    assert default_file(small).is_file()  # built on first use
    seen.clear()
    res = CliRunner().invoke(app, ["ask", QUESTION, "--db", str(small.path), "--no-kb", "--json"])
    assert res.exit_code == 0, res.output
    assert seen and not any(KB_HEADER in s for s in seen)
