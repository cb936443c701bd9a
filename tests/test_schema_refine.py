"""Schema refinement through views on the embedded PostgreSQL: base tables unchanged, views equal to
their tables, renames that break workload queries rejected, SQL over views translated back."""

from __future__ import annotations

import json

import pytest

from actsagent import kb
from actsagent import schema_refine as sr
from actsagent.cli import app
from actsagent.cli._common import run_app
from actsagent.errors import UserError
from actsagent.schema_refine.views import RefinedDatabase, to_base
from actsagent.sqlnames import references

SETUP = [
    "CREATE TABLE dept (dept_no int PRIMARY KEY, dnm text, cntry text)",
    "CREATE TABLE emp (e_id int PRIMARY KEY, nm text, sal numeric, dept_no int REFERENCES dept(dept_no), "
    '"HireDt" text)',
    "INSERT INTO dept VALUES (1, 'Research', 'Norway'), (2, 'Sales', 'Italy'), (3, 'Legal', 'Norway')",
    "INSERT INTO emp VALUES (10, 'Ada', 5000, 1, '2020-01-02'), (11, 'Bob', 4200, 2, '2021-03-04'), "
    "(12, 'Cleo', 6100, 1, '2019-05-06'), (13, 'Dan', 3900, 3, '2022-07-08')",
]
WORKLOAD = [
    sr.WorkloadItem(
        question="Employees in Norway",
        sql="SELECT nm FROM emp JOIN dept ON emp.dept_no = dept.dept_no WHERE cntry = 'Norway' ORDER BY nm",
    ),
    sr.WorkloadItem(
        question="Average salary per department",
        sql="SELECT dnm, avg(sal) FROM emp JOIN dept ON emp.dept_no = dept.dept_no GROUP BY dnm",
    ),
    sr.WorkloadItem(question="Countries", sql="SELECT DISTINCT cntry FROM dept"),
    sr.WorkloadItem(question="Hires", sql='SELECT nm, "HireDt" FROM emp ORDER BY "HireDt"'),
]


def _snapshot(db) -> tuple:
    cols = db.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'public' ORDER BY 1, 2"
    )
    rows = db.execute(
        "SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM emp t), "
        "(SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM dept t)"
    )
    return cols.rows, rows.rows


@pytest.fixture
def company(pg_db_factory):
    return pg_db_factory(SETUP)


def test_screen_flags_obscure_names_and_spares_keys(company):
    cands = {(c.table, c.column) for c in sr.screen(company.schema())}
    assert {("dept", "dnm"), ("dept", "cntry"), ("emp", "nm"), ("emp", "sal")} <= cands
    assert ("emp", "dept_no") not in cands  # a foreign key follows its key
    assert ("emp", None) in cands and ("dept", None) in cands  # table names are screened too


def test_kb_proposals_views_and_untouched_base_tables(company):
    before = _snapshot(company)
    k = kb.build(company)
    props = sr.propose_from_kb(sr.screen(company.schema()), k)
    by = {(p.table, p.column): p.names[0] for p in props}
    assert by[("dept", "cntry")] == "country" and by[("emp", "nm")] == "name"
    ref = sr.refine(company, props, WORKLOAD)
    kept = {(d.table, d.column): d.new for d in ref.decisions if d.new}
    assert kept[("dept", "cntry")] == "country" and kept[("emp", "nm")] == "name"
    assert _snapshot(company) == before  # base tables: same columns, same rows
    for tm in ref.tables:  # every view holds exactly its base table's rows
        diff = company.execute(
            f'SELECT count(*) FROM ((SELECT * FROM refined."{tm.view}" EXCEPT ALL '
            f'SELECT * FROM public."{tm.table}") UNION ALL (SELECT * FROM public."{tm.table}" '
            f'EXCEPT ALL SELECT * FROM refined."{tm.view}")) d'
        )
        n = company.execute(
            f'SELECT (SELECT count(*) FROM refined."{tm.view}"), (SELECT count(*) FROM public."{tm.table}")'
        )
        assert diff.rows == [[0]] and n.rows[0][0] == n.rows[0][1]
    assert sr.load_refinement(company) == ref.model_copy(update={"decisions": [], "skipped_workload": []})
    # an agent pointed at the refined database sees only the views, under the new names
    rdb = RefinedDatabase(company, ref)
    try:
        view = {tm.table: tm.view for tm in ref.tables}
        names = {t.name: [c.name for c in t.columns] for t in rdb.schema().tables}
        assert set(names) == set(view.values())
        assert "country" in names[view["dept"]] and "name" in names[view["emp"]] and "nm" not in names[view["emp"]]
        assert rdb.execute(f"SELECT name FROM {view['emp']} WHERE e_id = 10").rows == [["Ada"]]
    finally:
        rdb.close()


def test_a_rename_that_breaks_a_workload_query_is_rejected(company):
    # dept.dnm -> "nm" makes the unqualified "nm" of the second query (GROUP BY dnm) ambiguous in the join
    props = [
        sr.Proposal(table="dept", column="dnm", names=["nm", "dept_name"], source="user"),
        sr.Proposal(table="emp", column="sal", names=["salary"], source="user"),
    ]
    ref = sr.refine(company, props, WORKLOAD, materialise=False)
    d = {(x.table, x.column): x for x in ref.decisions}
    assert d[("dept", "dnm")].new == "dept_name"  # the first name was tried and refused
    assert d[("emp", "sal")].new == "salary"
    props = [sr.Proposal(table="dept", column="dnm", names=["nm"], source="user")]
    ref = sr.refine(company, props, WORKLOAD, materialise=False)
    assert ref.decisions[0].new is None
    assert "ambiguous" in ref.decisions[0].reason and "query #1" in ref.decisions[0].reason
    assert sr.load_refinement(company) is None  # nothing materialised


def test_renames_that_clash_together_are_dropped_by_the_global_check(company):
    # each alone is fine, both together make "label" ambiguous in the join queries
    props = [
        sr.Proposal(table="dept", column="dnm", names=["label"], source="user"),
        sr.Proposal(table="emp", column="nm", names=["label"], source="user"),
    ]
    ref = sr.refine(company, props, WORKLOAD, materialise=False)
    d = {(x.table, x.column): x for x in ref.decisions}
    assert d[("dept", "dnm")].new == "label"  # alone it passed, and it stays
    assert d[("emp", "nm")].new is None  # query #0 touches it and breaks once both are "label"
    assert d[("emp", "nm")].reason.startswith("dropped: with the other renames, query #0 breaks")


def test_untouched_identifiers_keep_their_names(company):
    props = [sr.Proposal(table="dept", column="dnm", names=["department_name"], source="user")]
    ref = sr.refine(company, props, [WORKLOAD[3]], materialise=False)
    assert ref.decisions[0].new is None and "no workload query" in ref.decisions[0].reason


def test_sql_over_views_translates_back_to_base_tables(company):
    props = [
        sr.Proposal(table="dept", column="cntry", names=["country"], source="user"),
        sr.Proposal(table="emp", column="nm", names=["name"], source="user"),
        sr.Proposal(table="emp", column="HireDt", names=["hire_date"], source="user"),
        sr.Proposal(table="dept", column=None, names=["department"], source="user"),
    ]
    ref = sr.refine(company, props, WORKLOAD)
    assert {d.new for d in ref.decisions if d.new} >= {"country", "name", "hire_date", "department"}
    info = company.schema(refresh=True)
    for sql in [
        "SELECT e.name, d.country FROM refined.emp e JOIN refined.department d ON e.dept_no = d.dept_no "
        "WHERE d.country = 'Norway' ORDER BY e.name",
        "SELECT country, count(*) AS n FROM refined.department GROUP BY country ORDER BY country",
        "SELECT name, hire_date FROM refined.emp WHERE hire_date > '2020-06-01' ORDER BY hire_date",
    ]:
        base_sql = to_base(sql, ref, info)
        assert "refined" not in base_sql
        refs = references(
            base_sql,
            info.model_copy(update={"tables": [t for t in info.tables if t.schema_name == "public"]}),
            "postgres",
        )
        assert refs.tables <= {"emp", "dept"} and refs.columns  # base names only
        on_views, on_base = company.execute(sql), company.execute(base_sql)
        assert on_views.ok and on_base.ok, (base_sql, on_base)
        assert on_views.rows == on_base.rows and [c.name for c in on_views.columns] == [c.name for c in on_base.columns]


def test_refinement_refuses_sqlite_and_foreign_schemas(company, sqlite_db, pg_db_factory):
    with pytest.raises(UserError, match="needs PostgreSQL"):
        sr.refine(sqlite_db, [], WORKLOAD)
    other = pg_db_factory(SETUP + ["CREATE SCHEMA refined", "CREATE TABLE refined.keep_me (x int)"])
    with pytest.raises(UserError, match="not made by actsagent"):
        sr.refine(other, [sr.Proposal(table="emp", column="sal", names=["salary"], source="user")], WORKLOAD)
    assert other.execute("SELECT count(*) FROM refined.keep_me").ok
    with pytest.raises(UserError, match="reserved"):
        sr.refine(company, [], WORKLOAD, schema="public")


def test_cli_refine_schema(company, tmp_path, capsys, sqlite_db):
    wl = tmp_path / "workload.json"
    wl.write_text(json.dumps([w.model_dump() for w in WORKLOAD]))
    assert run_app(app, ["refine-schema", "--db", company.url, "-w", str(wl), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["renamed"] >= 2 and out["schema"] == "refined"
    view = {t["table"]: t["view"] for t in out["refinement"]["tables"]}["dept"]
    assert company.execute(f"SELECT country FROM refined.{view} ORDER BY 1 LIMIT 1").rows == [["Italy"]]
    assert run_app(app, ["refine-schema", "--db", str(sqlite_db.path), "-w", str(wl)]) == 1
    assert "needs PostgreSQL" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "x"}]')
    assert run_app(app, ["refine-schema", "--db", company.url, "-w", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "item 0 has no SQL" in err and "Traceback" not in err


def test_llm_proposals_are_plain_identifiers_and_hostile_workload_is_skipped(company):
    from actsagent.llm import ScriptedChatModel

    k = kb.build(company)
    cands = [c for c in sr.screen(company.schema()) if (c.table, c.column) == ("emp", "sal")]
    model = ScriptedChatModel([{"names": ["salary; DROP TABLE emp", "Monthly Salary", "monthly_salary", "salary"]}])
    props = sr.propose_with_llm(cands, k, model)
    assert [p.names for p in props] == [["monthly_salary", "salary"]]  # only plain lower-case identifiers
    assert "Column: sal" in model.calls[0].last_user
    hostile = [
        sr.WorkloadItem(question="wipe", sql="DELETE FROM emp"),
        sr.WorkloadItem(question="sleep", sql="SELECT pg_sleep(100)"),
        WORKLOAD[1],
    ]
    ref = sr.refine(company, props, hostile, materialise=False)
    assert len(ref.skipped_workload) == 2 and all("guard" in s for s in ref.skipped_workload)
    assert ref.decisions[0].new == "monthly_salary"
    assert company.execute("SELECT count(*) FROM emp").rows == [[4]]
