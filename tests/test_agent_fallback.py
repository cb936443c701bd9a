"""Without an LLM the agent runs the deterministic plan and says what a model would add.

The runs only read the shop, so they share one copy (``module_shop``); the statement list has a database of its own.
"""

from __future__ import annotations

from actsagent.agent import ask, repair, stream


def test_no_llm_unknown_column_is_refined_by_safeql(module_shop):
    run = repair("names of customers from Germany", "SELECT nme FROM customers WHERE country = 'DE'", module_shop)
    tools = [n.tool for n in run.tree.executed()]
    assert tools == ["run_sql", "safeql_refine", "generate_sql"]
    assert run.status == "best_effort"  # executes, but nothing verified its meaning
    assert run.final_sql == "SELECT name FROM customers WHERE country = 'DE'"
    assert run.result.rows == [["Ada"]]
    assert run.verdict.method == "execution_only"
    assert any("no LLM configured" in n and "an LLM would add" in n for n in run.notes)
    assert run.usage.llm_calls == 0


def test_no_llm_syntax_error_gets_clause_localisation(module_shop):
    run = repair("customers from Germany", "SELECT name FROM customers WHERE country = = 'DE'", module_shop)
    split = next(n for n in run.tree.executed() if n.tool == "split_and_fix")
    assert split.output.localisation.clause_at_error == "WHERE"
    assert split.output.repaired_sql is None  # no model: localisation only
    assert run.status == "failed"


def test_no_llm_working_query_passes_through(module_shop):
    events = list(stream("all customer names", "SELECT name FROM customers ORDER BY name", module_shop))
    assert next(e.type for e in events) == "plan" and events[-1].type == "final"
    run = events[-1].run
    assert run.status == "best_effort" and run.final_sql == "SELECT name FROM customers ORDER BY name"
    assert [n.tool for n in run.tree.nodes.values()] == ["run_sql", "generate_sql"]
    # each node's start and end carry the tree as it then stood: the run's later changes are not in it
    ends = [e for e in events if e.type == "node_end"]
    assert [e.node.status for e in ends] == ["done", "accepted"]
    assert ends[0].tree.nodes[ends[1].node_id].status == "pending"


def test_ask_without_llm_says_it_needs_one(module_shop):
    run = ask("how many customers?", module_shop)
    assert run.status == "failed" and "needs a model" in run.notes[0]


def test_variant_modes_without_llm_use_the_fallback(module_shop):
    run = repair("all customer names", "SELECT name FROM customers", module_shop, mode="regenerate")
    assert any("needs an LLM" in n for n in run.notes) and run.final_sql == "SELECT name FROM customers"


def test_no_llm_statement_list_localises_the_failing_statement(pg_db_factory):
    from actsagent.guard import Policy

    db = pg_db_factory(["CREATE TABLE loan (id INT)"], writable=True)
    script = [
        "CREATE FUNCTION stamp() RETURNS trigger AS $$ BEGIN RETURN NEW; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER loan_stamp BEFORE INSERT FOR EACH ROW EXECUTE FUNCTION stamp()",
    ]
    run = repair("stamp new loans", script, db, policy=Policy.sandbox())
    split = next(n for n in run.tree.executed() if n.tool == "split_and_fix")
    assert split.resolved_input["sql"] == script  # the whole list, not one statement tested alone
    assert split.output.localisation.failing_statement == 2
    assert "no clause fails" not in split.summary and "statement 2 of 2 fails" in split.summary


def test_no_llm_unreviewed_function_is_translated_by_safeql(module_shop):
    """The strict guard rejects SQLite's strftime; the fallback still tries SafeQL, which translates it."""
    from actsagent.guard import check_sql

    run = repair(
        "number of orders per year",
        "SELECT strftime('%Y', ordered_at) AS yr, count(*) FROM orders GROUP BY yr ORDER BY yr",
        module_shop,
    )
    nodes = run.tree.executed()
    assert [n.tool for n in nodes] == ["run_sql", "safeql_refine", "generate_sql"]
    assert nodes[0].output.statements[0].error.engine == "guard"  # never sent to the database
    assert nodes[1].output.status == "refined"
    assert run.status == "best_effort" and "strftime" not in run.final_sql.lower()
    assert check_sql(run.final_sql, "postgres").ok and run.result.rows == [["2024", 4]]


def test_no_llm_aggregate_over_a_filter_matching_nothing_is_refined(module_shop):
    # COUNT 0 / SUM NULL is what an aggregate over an empty row set returns: treated like an empty result
    run = repair(
        "number and value of paid orders", "SELECT count(*), sum(total) FROM orders WHERE status = 'PAID'", module_shop
    )
    assert [n.tool for n in run.tree.executed()] == ["run_sql", "safeql_refine", "generate_sql"]
    assert "'paid'" in run.final_sql
    assert run.result.rows[0][0] == 2
