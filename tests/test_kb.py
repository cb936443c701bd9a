"""The knowledge base on real databases: build (templated, glossary, scripted LLM), pgvector and file
stores, hierarchical retrieval within a budget, reformulation, verified-example enrichment and undo."""

from __future__ import annotations

import json

import pytest
from engines import sqlite_file

from actsagent import kb
from actsagent.cli import app
from actsagent.cli._common import run_app
from actsagent.db.sqlite import SqliteDatabase
from actsagent.errors import UserError
from actsagent.kb.store import PgStore, PgVectorIndex
from actsagent.llm import ScriptedChatModel

CLUB = [
    "CREATE TABLE mjr (mjr_id TEXT PRIMARY KEY, mjr_nm TEXT, dept TEXT)",
    "CREATE TABLE mbr (mbr_id TEXT PRIMARY KEY, fnm TEXT, lnm TEXT, cntry TEXT, lnk_mjr TEXT REFERENCES mjr(mjr_id))",
    "CREATE TABLE evt (evt_id TEXT PRIMARY KEY, evt_nm TEXT, evt_dt TEXT, sts TEXT)",
    "CREATE TABLE att (lnk_evt TEXT REFERENCES evt(evt_id), lnk_mbr TEXT REFERENCES mbr(mbr_id))",
    "CREATE TABLE bdg (bdg_id TEXT PRIMARY KEY, ctgry TEXT, amt INTEGER, lnk_evt TEXT REFERENCES evt(evt_id))",
    "CREATE TABLE k12 (k12_id INTEGER PRIMARY KEY, cnt_k12 INTEGER)",
    "INSERT INTO mjr VALUES ('m1', 'Physics', 'Science Department'), ('m2', 'Art History', 'Art and Design Department')",
    "INSERT INTO mbr VALUES ('p1', 'Angela', 'Sanders', 'Norway', 'm1'), ('p2', 'Luisa', 'Guidi', 'Italy', 'm2'), "
    "('p3', 'Phillip', 'Cullen', 'Norway', 'm1')",
    "INSERT INTO evt VALUES ('e1', 'April Speaker', '2019-04-02', 'Closed'), ('e2', 'Laugh Out Loud', '2019-10-11', "
    "'Open')",
    "INSERT INTO att VALUES ('e1', 'p1'), ('e1', 'p2'), ('e2', 'p3')",
    "INSERT INTO bdg VALUES ('b1', 'Food', 120, 'e1'), ('b2', 'Advertisement', 50, 'e1'), ('b3', 'Food', 80, 'e2')",
    "INSERT INTO k12 VALUES (1, 300), (2, 410)",
]


@pytest.fixture
def club(tmp_path):
    db = SqliteDatabase(sqlite_file(tmp_path / "club.sqlite", CLUB))
    yield db
    db.close()


@pytest.fixture
def kb_file(tmp_path):
    return tmp_path / "kb.json"


def test_templated_build_describes_names_values_and_keys(club, kb_file):
    k = kb.build(club, path=kb_file)
    assert kb_file.is_file() and k.described_by == "template"
    mbr = k.table("mbr")
    assert [r.ref_table for r in mbr.relationships] == ["mjr"]
    cntry = mbr.column("cntry")
    assert cntry.readable == "country" and "country" in cntry.description
    assert set(cntry.values) == {"Norway", "Italy"} and cntry.source == "template"
    assert k.table("bdg").column("amt").value_range == ("50", "120")
    assert mbr.column("lnk_mjr").references == "mjr.mjr_id"
    assert "referenced by" in k.table("evt").description
    assert kb.load(club, path=kb_file) == k


def test_glossary_outranks_templates_and_explains_terms(club, kb_file, tmp_path):
    g = tmp_path / "g.toml"
    g.write_text('[terms]\nk12 = "kindergarten through grade 12"\n[columns]\n"mbr.fnm" = "first name of the member"\n')
    k = kb.build(club, path=kb_file, glossary=g)
    assert k.table("mbr").column("fnm").description == "first name of the member"
    assert k.table("mbr").column("fnm").source == "glossary"
    assert "kindergarten through grade 12" in k.table("k12").column("cnt_k12").description


@pytest.mark.parametrize(
    "content,suffix,message",
    [
        ("{not json", ".json", "not valid JSON"),
        ('{"terms": {"a": 5}}', ".json", "terms.a"),
        ('{"words": {}}', ".json", "unknown section"),
        ("terms = 3", ".toml", "terms"),
        (b"\xff\xfe\x00", ".json", "not UTF-8"),
    ],
)
def test_bad_glossary_is_one_clear_error(tmp_path, content, suffix, message):
    from actsagent.kb import load_glossary

    p = tmp_path / f"g{suffix}"
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(UserError, match=message):
        load_glossary(p)


def test_context_stays_within_budget_and_grows_with_it(club, kb_file):
    kb.build(club, path=kb_file)
    q = "Which members from Norway attended the April Speaker event?"
    small = kb.context_for(q, club, 400, path=kb_file)
    big = kb.context_for(q, club, 4000, path=kb_file)
    assert len(small.text) <= 400 and len(big.text) <= 4000
    assert set(small.columns) <= set(big.columns)
    # values quoted by the question find their columns; the join bridge comes along the foreign keys
    assert {"mbr", "evt", "att"} <= set(small.selected_tables)
    for col in ("mbr.cntry", "evt.evt_nm", "att.lnk_mbr", "att.lnk_evt"):
        assert small.contains(*col.split(".")), (col, small.text)
    assert big.total_tables == 6 and big.contains("k12")
    assert big.prompt_vars()["schema_total"] == 6


def test_budget_too_small_or_empty_question_is_refused(club, kb_file):
    with pytest.raises(UserError):
        kb.context_for("  ", club, path=kb_file)
    with pytest.raises(UserError):
        kb.context_for("members", club, 50, path=kb_file)


def test_llm_free_reformulation_adds_value_columns_and_glossary(club, kb_file, tmp_path):
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"terms": {"pupils": "count k12 students"}}))
    kb.build(club, path=kb_file, glossary=g)
    r = kb.retriever(club, path=kb_file)
    r.threshold = 1.01  # force every pass to look insufficient
    ctx = r.retrieve("How many pupils in Norway?", budget_chars=1500)
    assert ctx.iterations >= 2 and ctx.reformulations
    assert "count k12 students" in ctx.reformulations[0]
    assert "country of mbr" in ctx.reformulations[0]  # the value Norway named its column


def test_llm_reformulation_through_the_prompt(club, kb_file):
    kb.build(club, path=kb_file)
    model = ScriptedChatModel([{"question": "list the budget amount for food", "missing": ["budget category"]}] * 5)
    r = kb.retriever(club, path=kb_file, model=model)
    r.threshold, r.max_iterations = 1.01, 2
    ctx = r.retrieve("How much for snacks?", budget_chars=1200)
    assert len(model.calls) == 1 and "snacks" in model.calls[0].last_user
    assert ctx.reformulations == ["How much for snacks? list the budget amount for food budget category"]
    assert ctx.contains("bdg", "amt")


def test_llm_descriptions_are_bounded_and_only_for_real_columns(club, kb_file):
    from actsagent.kb.build import DESCRIPTION_MAX

    def answer(messages, role, response_model):
        text = messages[-1]["content"]
        table = text.split("Table: ")[1].split(" ")[0]
        return {"table": f"LLM says: {table}", "columns": {"ghost": "x", "cntry": "country of residence " * 50}}

    model = ScriptedChatModel(answer)
    k = kb.build(club, path=kb_file, model=model)
    assert len(model.calls) == 6
    assert k.table("mbr").description == "LLM says: mbr" and k.table("mbr").source == "llm"
    c = k.table("mbr").column("cntry")
    assert c.source == "llm" and len(c.description) <= DESCRIPTION_MAX
    assert k.table("mbr").column("ghost") is None
    assert k.table("mjr").column("mjr_nm").source == "template"  # the model said nothing about it


def test_examples_are_verified_boost_retrieval_and_can_be_undone(club, kb_file):
    kb.build(club, path=kb_file)
    prov = kb.Provenance(source="user", verified_by="alice", reference="TICKET-1")
    with pytest.raises(UserError, match="guard"):
        kb.add_example(club, "drop it", "DELETE FROM mbr", prov, path=kb_file)
    with pytest.raises(UserError, match="fails"):
        kb.add_example(club, "bad", "SELECT nope FROM mbr", prov, path=kb_file)
    q = "What is the spend per category?"
    before = kb.retriever(club, path=kb_file)._score(q, q, 1)
    ex = kb.add_example(
        club, "Total spend per category", "SELECT ctgry, SUM(amt) FROM bdg GROUP BY ctgry", prov, path=kb_file
    )
    assert ex.tables == ["bdg"] and ex.columns == ["bdg.amt", "bdg.ctgry"]
    with pytest.raises(UserError, match="already"):
        kb.add_example(
            club, "Total spend per category", "SELECT ctgry, SUM(amt) FROM bdg GROUP BY ctgry", prov, path=kb_file
        )
    after = kb.retriever(club, path=kb_file)._score(q, q, 1)
    assert after.tables["bdg"] > before.tables["bdg"]
    assert after.columns[("bdg", "amt")] > before.columns[("bdg", "amt")]
    kb.retract_example(club, ex.id, reason="wrong sum", by="bob", path=kb_file)
    assert not kb.load(club, path=kb_file).active_examples()
    kb.undo(club, path=kb_file)  # the retraction
    assert [e.id for e in kb.load(club, path=kb_file).active_examples()] == [ex.id]
    kb.undo(club, path=kb_file)  # the addition
    assert kb.load(club, path=kb_file).examples == []
    with pytest.raises(UserError, match="nothing to undo"):
        kb.undo(club, path=kb_file)


def test_manual_edit_survives_rebuild_and_undo_restores(club, kb_file):
    kb.build(club, path=kb_file)
    old = kb.load(club, path=kb_file).table("mbr").column("lnm").description
    kb.edit_description(club, "mbr", "lnm", "family name", by="carol", path=kb_file)
    k = kb.build(club, path=kb_file)
    assert k.table("mbr").column("lnm").description == "family name"
    assert k.table("mbr").column("lnm").source == "manual"
    kb.undo(club, path=kb_file)
    c = kb.load(club, path=kb_file).table("mbr").column("lnm")
    assert (c.description, c.source) == (old, "template")
    with pytest.raises(UserError, match="no column"):
        kb.edit_description(club, "mbr", "ghost", "x", by="carol", path=kb_file)


def test_postgres_store_two_levels_hidden_from_the_schema(pg_db_factory):
    db = pg_db_factory([s.replace("INTEGER PRIMARY KEY", "INTEGER PRIMARY KEY") for s in CLUB])
    k = kb.build(db)
    assert db.schema(refresh=True).table("kb_tables") is None  # actsagent_kb is not the user's data
    assert {t.name for t in db.schema().tables} == {"mjr", "mbr", "evt", "att", "bdg", "k12"}
    n = db.execute(
        "SELECT (SELECT count(*) FROM actsagent_kb.kb_tables), (SELECT count(*) FROM actsagent_kb.kb_columns)"
    )
    assert n.rows == [[6, sum(len(t.columns) for t in k.tables)]]
    r = kb.retriever(db)
    assert isinstance(r.index, PgVectorIndex)
    q = "Which members from Norway attended the April Speaker event?"
    pg_ctx = r.retrieve(q)
    from actsagent.kb.store import NumpyIndex
    from actsagent.safeql.embeddings import shared_embedder

    np_ctx = kb.Retriever(
        kb=kb.load(db), index=NumpyIndex(kb.load(db), shared_embedder()), embedder=shared_embedder()
    ).retrieve(q)
    assert pg_ctx.selected_tables == np_ctx.selected_tables and pg_ctx.columns == np_ctx.columns
    assert pg_ctx.backend == "pgvector" and np_ctx.backend == "numpy"
    assert isinstance(PgStore(db).load(), kb.KnowledgeBase)


def test_cli_build_show_edit_context_export(club, kb_file, capsys, tmp_path):
    path = str(club.path)
    assert run_app(app, ["kb", "build", "--db", path, "--kb-file", str(kb_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tables"] == 6
    assert run_app(app, ["kb", "edit", "mbr.cntry", "-d", "home country", "--db", path, "--kb-file", str(kb_file)]) == 0
    assert run_app(app, ["kb", "show", "--db", path, "--kb-file", str(kb_file), "-t", "mbr"]) == 0
    out = capsys.readouterr().out
    assert "home country" in out and "(manual)" in out
    assert (
        run_app(
            app,
            [
                "kb",
                "context",
                "members from Norway",
                "--db",
                path,
                "--kb-file",
                str(kb_file),
                "--budget",
                "600",
                "--json",
            ],
        )
        == 0
    )
    ctx = json.loads(capsys.readouterr().out)
    assert len(ctx["text"]) <= 600 and "mbr.cntry" in ctx["columns"]
    out_file = tmp_path / "kb_export.json"
    assert run_app(app, ["kb", "export", "--db", path, "--kb-file", str(kb_file), "-o", str(out_file)]) == 0
    exported = json.loads(out_file.read_text())
    assert exported["tables"][0]["columns"][0].get("values") is None  # matching lists stay internal
    assert exported["history"][0]["kind"] == "edit"
    capsys.readouterr()
    assert run_app(app, ["kb", "show", "--db", path, "--kb-file", str(kb_file), "-t", "ghosts"]) == 1
    err = capsys.readouterr().err
    assert "no such table in the knowledge base: ghosts" in err and "Traceback" not in err
    assert (
        run_app(
            app,
            [
                "kb",
                "add-example",
                "-q",
                "x",
                "-s",
                "DROP TABLE mbr",
                "--verified-by",
                "me",
                "--db",
                path,
                "--kb-file",
                str(kb_file),
            ],
        )
        == 1
    )
    assert "guard" in capsys.readouterr().err


def test_sql_named_tables_are_always_in_the_context(club, kb_file):
    kb.build(club, path=kb_file)
    q = "Which members from Norway attended the April Speaker event?"
    plain = kb.context_for(q, club, 300, path=kb_file)
    assert "k12" not in plain.selected_tables
    forced = kb.context_for(q, club, 300, path=kb_file, sql="SELECT cnt_k12 FROM k12")
    assert forced.selected_tables[0] == "k12" and forced.contains("k12")


def test_only_solved_and_passed_runs_enrich(club, kb_file):
    from actsagent.graphs.models import AgentRun
    from actsagent.tools import Verdict

    kb.build(club, path=kb_file)
    sql = "SELECT fnm FROM mbr WHERE cntry = 'Norway'"

    def run(status: str, passed: bool, **kw: str) -> AgentRun:
        verdict = Verdict(passed=passed, method="llm")
        return AgentRun(status=status, intent="members in Norway", final_sql=sql, verdict=verdict, **kw)

    with pytest.raises(UserError, match="not a verified answer"):
        kb.add_verified_run(club, run("best_effort", True), verified_by="judge", path=kb_file)
    with pytest.raises(UserError, match="not a verified answer"):
        kb.add_verified_run(club, run("solved", False), verified_by="judge", path=kb_file)
    ex = kb.add_verified_run(club, run("solved", True, thread_id="t-1"), verified_by="judge", path=kb_file)
    assert ex.provenance.source == "agent" and ex.provenance.reference == "t-1"
    assert ex.columns == ["mbr.cntry", "mbr.fnm"]


CODED = [  # a schema whose names say nothing (the hard degraded level); only its data dictionary does
    "CREATE TABLE T01 (id01 INTEGER PRIMARY KEY, A2 TEXT, A3 INTEGER)",
    "CREATE TABLE T02 (id02 INTEGER PRIMARY KEY, b01 TEXT, b02 REAL, id01 INTEGER REFERENCES T01(id01))",
    "CREATE TABLE T03 (id03 INTEGER PRIMARY KEY, C2 TEXT, C3 TEXT, C4 TEXT, C5 TEXT)",
    "CREATE TABLE T04 (id04 INTEGER PRIMARY KEY, D2 TEXT, D3 TEXT, D4 INTEGER, D5 TEXT)",
    "INSERT INTO T01 VALUES (1, 'Wembley', 90000), (2, 'Hampden Park', 51866)",
    "INSERT INTO T02 VALUES (1, 'Spring Gala', 12.5, 1), (2, 'Autumn Night', 30.0, 2)",
    "INSERT INTO T03 VALUES (1, 'x', 'y', 'z', 'w')",
    "INSERT INTO T04 VALUES (1, 'p', 'q', 3, 'r')",
]
DICTIONARY = {
    "tables": {
        "T01": "stadium: one row per stadium record; columns: stadium id, name, capacity",
        "T02": "concert: one row per concert record; columns: concert id, concert name, ticket price, stadium id",
        "T03": "warehouse: one row per warehouse record; columns: warehouse id, aisle, shelf, bin, label",
        "T04": "supplier: one row per supplier record; columns: supplier id, street, city, rating, phone",
    },
    "columns": {
        "T01.A2": "name of the stadium",
        "T01.A3": "capacity of the stadium",
        "T02.b01": "concert name of the concert",
        "T02.b02": "ticket price of the concert",
    },
}


def test_a_data_dictionary_makes_coded_names_findable_and_reaches_the_prompt(tmp_path, kb_file):
    from actsagent.prompts import render
    from actsagent.tools._context import ToolContext

    db = SqliteDatabase(sqlite_file(tmp_path / "coded.sqlite", CODED))
    try:
        (tmp_path / "dict.json").write_text(json.dumps(DICTIONARY))
        k = kb.build(db, path=kb_file, glossary=tmp_path / "dict.json")
        assert k.table("T01").column("A3").source == "glossary"
        question = "What is the ticket price of each concert?"
        ctx = kb.retriever(db, path=kb_file).retrieve(question, budget_chars=300)
        assert ctx.contains("T02", "b02"), ctx.text
        assert "ticket price of the concert" in ctx.text
        assert "30.0" in ctx.text or "12.5" in ctx.text  # the dictionary's line keeps the values' range
        assert ctx.selected_tables[0] == "T02", ctx.selected_tables  # ranked first by the dictionary's words
        # the same description is what the prompt's schema block shows
        tc = ToolContext(db=db, schema_source="kb", kb=kb.retriever(db, path=kb_file), kb_budget=300)
        vars_ = tc.schema_vars(intent=question)
        messages = render(
            "single_shot", dialect="sqlite", intent=question, original_sql="", statement_list=False, **vars_
        )
        assert "b02 real -- ticket price of the concert" in messages[-1]["content"]
        # without the dictionary the coded column has nothing to be found by
        bare = kb.build(db, path=tmp_path / "bare.json")
        assert bare.table("T02").column("b02").source == "template"
        plain = kb.retriever(db, path=tmp_path / "bare.json").retrieve(question, budget_chars=300)
        assert "ticket price" not in plain.text and plain.selected_tables[0] != "T02"
    finally:
        db.close()
