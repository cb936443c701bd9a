"""split_and_fix: clause-level sub-queries with empty stand-ins, localisation without an LLM, repair with one."""

from __future__ import annotations

from actsagent.llm import ScriptedChatModel
from actsagent.tools import SplitAndFixInput, ToolContext, localise, split_and_fix
from actsagent.tools._decompose import decompose

CTE_SQL = (
    "WITH per AS (SELECT customer_id, SUM(totl) AS s FROM orders GROUP BY customer_id) "
    "SELECT c.name, per.s FROM customers c JOIN per ON per.customer_id = c.id WHERE c.country = 'DE'"
)


def test_decompose_stubs_dependencies(pg_db):
    schema = {t.name: {c.name: c.type for c in t.columns} for t in pg_db.schema().tables}
    qs = decompose(CTE_SQL, "postgres", schema)
    kinds = {(q.unit, q.kind) for q in qs}
    assert {
        ("per", "aggregation"),
        ("main", "join"),
        ("main", "filter"),
        ("main", "projection"),
        ("main", "unit"),
    } <= kinds
    main_join = next(q for q in qs if (q.unit, q.kind) == ("main", "join"))
    assert main_join.depends_on == ["per"]
    assert "WHERE 1 = 0" in main_join.sql and "SUM(totl)" not in main_join.sql  # empty stand-in, not the CTE


def test_localises_the_failing_unit_while_the_rest_checks_independently(pg_db):
    out = localise(CTE_SQL, ToolContext(db=pg_db))
    assert out.original_error.error_class.value == "unknown_column"
    failing = {(s.unit, s.kind) for s in out.sub_queries if not s.ok}
    assert ("per", "aggregation") in failing
    assert all(s.ok for s in out.sub_queries if s.unit == "main" and s.kind != "unit")  # checked against the stub
    assert out.localisation.failing_clauses[0] == "per: GROUP BY/aggregates"


def test_localises_a_parse_error_to_its_clause(pg_db):
    out = localise("SELECT name FROM customers c JOIN orders o ON o.customer_id = = c.id", ToolContext(db=pg_db))
    assert not out.localisation.parsed and out.localisation.clause_at_error == "JOIN ... ON"


def test_join_error_is_named(pg_db):
    out = localise(
        "SELECT c.name FROM customers c JOIN orders o ON o.cust_id = c.id WHERE c.country = 'DE'", ToolContext(db=pg_db)
    )
    assert out.localisation.failing_clauses == ["main: FROM/JOIN"]


def test_llm_repairs_from_clause_evidence(pg_db):
    seen = []

    def script(messages, role, response_model):
        seen.append(messages[-1]["content"])
        return {"sql": CTE_SQL.replace("totl", "total"), "explanation": "per: totl -> total"}

    ctx = ToolContext(db=pg_db, model=ScriptedChatModel(script))
    out = split_and_fix(SplitAndFixInput(sql=CTE_SQL, intent="sum per German customer"), ctx)
    assert out.repaired_sql and out.repaired_result.ok and out.repaired_result.rows == [["Ada", "150.50"]]
    assert "[per / GROUP BY/aggregates] unknown_column" in seen[0]
    assert ctx.meter.total.llm_calls == 1


def test_recursive_cte_does_not_loop(pg_db):
    sql = (
        "WITH RECURSIVE chain(id, n) AS (SELECT id, 1 FROM customers WHERE id = 1 "
        "UNION ALL SELECT c.id, chain.n + 1 FROM customers c JOIN chain ON c.id = chain.id + 1) "
        "SELECT id, nn FROM chain"
    )
    out = localise(sql, ToolContext(db=pg_db))
    assert out.localisation.parsed and out.original_error is not None
    assert any(s.unit == "main" and not s.ok for s in out.sub_queries)


def test_sandbox_uses_empty_temporary_tables(pg_db):
    from actsagent.db.sandbox import sandbox
    from actsagent.guard import Policy

    with sandbox(pg_db) as box:
        out = localise(CTE_SQL, ToolContext(db=box, policy=Policy.sandbox()))
        main_join = next(s for s in out.sub_queries if (s.unit, s.kind) == ("main", "join"))
        assert main_join.sql.startswith("CREATE TEMPORARY TABLE per") and "ON COMMIT DROP" in main_join.sql
        assert main_join.ok  # checked against the empty table, independently of the broken CTE
        assert out.localisation.failing_clauses[0] == "per: GROUP BY/aggregates"
        # nothing is left behind
        assert box.execute("SELECT count(*) FROM pg_class WHERE relname = 'per'").rows == [[0]]


LOAN = ["CREATE TABLE loan (id INT, amount INT)", "INSERT INTO loan VALUES (1, 10)"]
TRIGGER_SCRIPT = [
    "CREATE FUNCTION stamp() RETURNS trigger AS $$ BEGIN RETURN NEW; END $$ LANGUAGE plpgsql",
    "CREATE TRIGGER loan_stamp BEFORE INSERT FOR EACH ROW EXECUTE FUNCTION stamp()",  # no ON loan
    "INSERT INTO loan VALUES (2, 20)",
]


def _sandbox_ctx(db, model=None):
    from actsagent.guard import Policy

    return ToolContext(db=db, policy=Policy.sandbox(), model=model)


def test_statement_list_reports_the_failing_statement_and_engine_error(pg_db_factory):
    db = pg_db_factory(LOAN, writable=True)
    out = localise(TRIGGER_SCRIPT, _sandbox_ctx(db))
    loc = out.localisation
    assert out.original_error is not None and out.original_error.error_class.value == "syntax"
    assert loc.failing_statement == 2 and loc.statement_count == 3
    assert loc.message.startswith("statement 2 of 3 fails (CREATE TRIGGER loan_stamp")
    assert 'syntax error at or near "FOR"' in loc.message and "statement 3 did not run" in loc.message
    assert "no clause fails" not in loc.message
    assert [(s.unit, s.ok) for s in out.sub_queries] == [("statement 1", True), ("statement 2", False)]
    # the script ran in a disposable copy: the task database is untouched
    assert db.execute("SELECT count(*) FROM pg_proc WHERE proname = 'stamp'").rows == [[0]]
    # the same script as one string is split the same way
    assert localise(";\n".join(TRIGGER_SCRIPT), _sandbox_ctx(db)).localisation.failing_statement == 2


def test_statements_that_pass_alone_but_fail_together(pg_db_factory):
    db = pg_db_factory(LOAN, writable=True)
    script = ["CREATE TABLE audit (id INT)", "CREATE TABLE audit (id INT)"]
    for s in script:  # each statement alone is fine
        assert localise(s, _sandbox_ctx(db)).original_error is None
    out = localise(script, _sandbox_ctx(db))
    assert out.localisation.failing_statement == 2 and 'relation "audit" already exists' in out.localisation.message
    assert "no clause fails" not in out.localisation.message


def test_a_failing_query_in_a_read_only_list_is_split_into_clauses(pg_db):
    out = localise(
        ["SELECT 1", "SELECT c.name FROM customers c JOIN orders o ON o.cust_id = c.id"], ToolContext(db=pg_db)
    )
    assert out.localisation.failing_statement == 2
    assert out.localisation.message.startswith("statement 2 of 2 fails: failing clause(s): main: FROM/JOIN")


def test_llm_repairs_a_statement_list_shown_numbered_and_answers_an_array(pg_db_factory):
    db = pg_db_factory(LOAN, writable=True)
    seen = []
    fixed = [TRIGGER_SCRIPT[0], TRIGGER_SCRIPT[1].replace("INSERT FOR", "INSERT ON loan FOR"), TRIGGER_SCRIPT[2]]

    def script(messages, role, response_model):
        seen.append(messages)
        return {"sql": fixed, "explanation": "statement 2: the trigger needs ON loan"}

    out = split_and_fix(
        SplitAndFixInput(sql=TRIGGER_SCRIPT, intent="stamp new loans"), _sandbox_ctx(db, ScriptedChatModel(script))
    )
    system, user = seen[0][0]["content"], seen[0][-1]["content"]
    assert "-- statement 2 of 3\nCREATE TRIGGER loan_stamp" in user and "EXECUTE FUNCTION stamp();" in user
    assert "JSON array of strings" in system and "one JSON string" not in system
    assert out.repaired_sql == fixed and out.repaired_result is not None and out.repaired_result.ok
