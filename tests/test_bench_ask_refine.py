"""The ask benchmark over EGRefine's views (``bench_ask --refine``), with a scripted model (no model is
reached): a degraded Spider database refined on the questions outside the draw, the model answering
over the view names, its SQL translated back to the base tables and scored there, the safety figures."""

from __future__ import annotations

import json

import pytest
from test_bench_ask import ba, script_for

from actsagent.benchmarks import data_root, db_path, load_questions
from actsagent.db.postgres import PostgresDatabase
from actsagent.degrade import degrade_questions, load_degraded_questions, plan_renames, write_degraded
from actsagent.llm import FailingChatModel, ScriptedChatModel
from actsagent.schema_refine.bench import postgres_sql, refine_drawn, translate
from actsagent.schema_refine.measure import digests
from actsagent.schema_refine.views import RefinedDatabase
from actsagent.sqlnames import rename

DB = "concert_singer"
DRAW = (0, 14, 17)  # how many singers; two questions on the stadiums (a renamed table)


@pytest.fixture
def degraded(tmp_path):
    """concert_singer degraded (seed 0) with all of its questions; a glossary beside the file names one column."""
    root = data_root()
    src = db_path(root, "spider_dev", DB)
    plan = plan_renames(src, seed=0)
    dst = db_path(tmp_path / "degraded", "spider_dev", DB)
    write_degraded(src, dst, plan)
    qs = [q for q in load_questions(root, "spider_dev") if q.db_id == DB]
    kept = degrade_questions(qs, src, dst, plan).kept
    (tmp_path / "degraded" / "spider_dev" / "questions.json").write_text(json.dumps([q.model_dump() for q in kept]))
    stadium = next(t for t in plan.tables if t.name == "stadium")
    glossary = {"columns": {f"{stadium.new_name}.{stadium.columns['Capacity']}": "Seat capacity: seats in the stadium"}}
    (dst.parent / f"{DB}.glossary.json").write_text(json.dumps(glossary))
    return (
        tmp_path / "degraded",
        {q.idx: q for q in load_degraded_questions(tmp_path / "degraded", "spider_dev")},
        stadium,
    )


def test_ask_over_refined_views_scores_on_the_base_tables(tmp_path, degraded, pg_admin_url):
    ddir, by_idx, stadium = degraded
    drawn = [by_idx[i] for i in DRAW]
    cfg = ba.AskConfig(
        bench="spider_dev", engine="postgres", mode="single_shot", variant="degraded", idx=list(DRAW), refine=True
    )
    dbs = ba._Databases(cfg, ddir)
    try:  # the answers the scripted model gives: the gold, written over the views' names
        runs = refine_drawn(drawn, dbs, ddir, tmp_path)
        rdb = dbs.refined[("spider_dev", DB)]
        base = dbs.get("spider_dev", DB)
        ref = rdb.refinement
        info = base.schema(refresh=True)
        info = info.model_copy(update={"tables": [t for t in info.tables if t.schema_name == "public"]})
        tables = {tm.table.lower(): tm.view for tm in ref.tables if tm.view != tm.table}
        over_views = {
            q.question: rename(postgres_sql(q.gold_sql), info, "postgres", tables=tables, columns=ref.column_map())
            for q in drawn
        }
    finally:
        dbs.close()
    run = runs[0]["run"]
    assert run["renamed"] > 0 and run["workload"] == len(by_idx) - len(DRAW)
    # the workload is the database's questions outside the draw: disjoint from what is scored
    assert set(runs[0]["workload_keys"]).isdisjoint(q.key for q in drawn)
    assert len(runs[0]["workload_keys"]) == len(by_idx) - len(DRAW)
    s = run["safety"]
    assert s["base_unchanged"] and s["views_equal"] and s["tables"] == 4 and s["base_rows"] > 0
    assert s["workload_verified"] > 0 and s["workload_kept"] == s["workload_verified"] and not s["workload_lost"]
    # the two questions grouping by concert's key fail over any view (PostgreSQL infers no functional
    # dependency from a view); translated back to the base tables, every workload query keeps its rows
    assert s["workload_view_incompatible"] == 2
    assert s["workload_translated_kept"] == s["workload_verified"] + 2 and not s["workload_translation_lost"]
    # the glossary beside the file named the stadium's capacity (its name tried first)
    cap = next(d for d in ref.decisions if (d.table, d.column) == (stadium.new_name, stadium.columns["Capacity"]))
    assert cap.tried[0] == "seat_capacity" and cap.new == "seat_capacity"
    assert runs[0]["run"]["proposed_by"]["glossary"] == 1

    q0, q1, q2 = drawn
    answers = {q0.question: "SELECT 42", q1.question: over_views[q1.question], q2.question: over_views[q2.question]}
    assert all("stadium" in over_views[q.question] and stadium.new_name not in over_views[q.question] for q in (q1, q2))
    seen: list[str] = []
    log: list[dict] = []
    records, _ = ba.run_bench(
        cfg, model=ScriptedChatModel(script_for(answers, seen)), out=tmp_path, degraded_dir=ddir, refine_log=log
    )
    by = {r["idx"]: r for r in records}
    assert [by[q.idx]["outcome"] for q in drawn] == ["wrong_result", "match", "match"]
    assert all(by[q.idx]["refined"] and by[q.idx]["translated"] for q in drawn)
    for q in (q1, q2):  # the SQL ran on the base tables: their (degraded) names, no view schema
        assert by[q.idx]["pred_sql"] == over_views[q.question] and "refined" not in by[q.idx]["base_sql"]
        assert stadium.new_name in by[q.idx]["base_sql"] and "stadium " not in by[q.idx]["base_sql"]
    # the prompts show the views' names, not the base tables'
    assert any("Table stadium" in t for t in seen) and not any(f"Table {stadium.new_name}" in t for t in seen)
    assert any("seat_capacity" in t for t in seen)
    assert log and log[0]["key"] == runs[0]["key"]  # the refinement was reused, not redone
    rep = ba.summarise(cfg, records, log)
    assert rep.summary["asked_over_views"] == 3 and rep.summary["translated_to_base"] == 3
    assert rep.summary["workload_disjoint_from_draw"] is True and rep.summary["refinement_safe"] is True
    assert "views = tables" in rep.to_markdown()
    again, _ = ba.run_bench(cfg, model=FailingChatModel(), out=tmp_path, degraded_dir=ddir)  # resumed: nothing asked
    assert sorted(r["key"] for r in again) == sorted(r["key"] for r in records)


def test_refine_only_step_reports_and_bad_configurations(tmp_path, degraded, pg_admin_url, capsys):
    ddir, _, _ = degraded
    args = ["--bench", "spider_dev", "--engine", "postgres", "--variant", "degraded", "--refine"]
    args += ["--sample", "5", "--seed", "3", "--degraded", str(ddir), "--out", str(tmp_path), "--build-kb-only"]
    assert ba.main(args) == 0
    out = capsys.readouterr().out
    assert "Refinement per database" in out and "spider_dev/concert_singer" in out
    data = json.loads(next(tmp_path.glob("bench_ask_refine_*.json")).read_text())
    assert data["summary"]["workload_disjoint_from_draw"] is True and data["summary"]["renames_kept"] > 0
    for bad in ({"engine": "sqlite", "variant": "degraded"}, {"engine": "postgres", "variant": "original"}):
        with pytest.raises(Exception, match="--refine needs"):
            ba.run_bench(ba.AskConfig(refine=True, **bad), model=ScriptedChatModel([]), out=tmp_path)


def test_translation_failure_runs_on_the_views_and_digests_see_a_change(company_refined):
    base, rdb = company_refined
    rec: dict = {}
    target, sql = translate(rec, "SELECT ((( FROM", rdb, base)
    assert (
        target is rdb
        and sql == "SELECT ((( FROM"
        and rec["refined"]
        and rec["translated"] is False
        and rec["translate_error"]
    )
    rec = {}
    target, sql = translate(rec, "SELECT 1", base, base)
    assert target is base and sql == "SELECT 1" and rec == {"refined": False}
    before = digests(base, [("public", "dept")])
    w = PostgresDatabase(base.url, writable=True)
    try:
        assert w.execute("UPDATE dept SET cntry = 'Spain' WHERE dept_no = 3", read_only=False).ok
    finally:
        w.close()
    after = digests(base, [("public", "dept")])
    assert before["public.dept"][0] == after["public.dept"][0] and before != after


@pytest.fixture
def company_refined(pg_db_factory):
    from test_schema_refine import SETUP, WORKLOAD

    from actsagent import schema_refine as sr

    db = pg_db_factory(SETUP)
    ref = sr.refine(db, [sr.Proposal(table="dept", column="cntry", names=["country"], source="user")], WORKLOAD)
    rdb = RefinedDatabase(db, ref)
    yield db, rdb
    rdb.close()


def test_a_knowledge_base_over_the_views_survives_refining_again(company_refined):
    """The knowledge base's pgvector extension never lands in the view schema (whose drop would cascade
    to the knowledge base's vector columns), so a second refinement keeps the refined schema's KB."""
    from test_schema_refine import WORKLOAD

    from actsagent import kb
    from actsagent import schema_refine as sr

    base, rdb = company_refined
    kb.build(rdb)
    where = base.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    )
    assert where.rows == [["public"]]
    sr.refine(base, [sr.Proposal(table="dept", column="cntry", names=["country"], source="user")], WORKLOAD)
    cols = base.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'actsagent_kb' "
        "AND column_name = 'embedding'"
    )
    assert cols.rows == [[3]] and kb.load(rdb) is not None
