"""The tree graph's control flow with a scripted model on the real embedded PostgreSQL.

The main case rebuilds the paper's Figure 3: "overlapping" is ambiguous; the wrong reading
(total booking count) is refuted by the judge, the planner rolls back to the alternative
(concurrent time overlap) rather than to the direct rewrite of the refuted reading, and that
reading's first candidate has a syntax error that split_and_fix repairs; the repaired candidate is
confirmed by its direct-rewrite sibling giving the same rows.
"""

from __future__ import annotations

import pytest
from agent_scripts import (
    NO_CHECKS,
    failed_of,
    is_rewrite,
    judged_sql,
    options_of,
    phase_of,
    plan_nodes,
    scores,
    user_text,
)

from actsagent.agent import repair
from actsagent.graphs.models import Budget
from actsagent.llm import ScriptedChatModel

BOOKINGS = [
    "CREATE TABLE bookings (id SERIAL PRIMARY KEY, room TEXT NOT NULL, guest TEXT, "
    "start_time TIMESTAMP NOT NULL, end_time TIMESTAMP NOT NULL)",
    "INSERT INTO bookings (room, guest, start_time, end_time) VALUES "
    "('A', 'ann', '2024-05-01 10:00', '2024-05-01 12:00'), ('A', 'ben', '2024-05-01 11:00', '2024-05-01 13:00'), "
    "('B', 'cat', '2024-05-01 09:00', '2024-05-01 10:00'), ('B', 'dan', '2024-05-02 09:00', '2024-05-02 10:00'), "
    "('C', 'eve', '2024-05-03 09:00', '2024-05-03 10:00')",
]
INTENT = "Which rooms have overlapping bookings?"
ORIGINAL = "SELECT room FROM bookings GROUP BY room HAVING COUNT(*) > 1 ORDER BY room"
COUNT_SQL = "SELECT room FROM bookings GROUP BY room HAVING COUNT(*) > 1 ORDER BY room"
BROKEN_OVERLAP = (
    "SELECT DISTINCT b1.room FROM bookings b1 JOIN bookings b2 ON b1.room = b2.room AND b1.id < b2.id "
    "WHERE b1.start_time < b2.end_time AND AND b2.start_time < b1.end_time ORDER BY b1.room"
)
OVERLAP = (
    "SELECT DISTINCT b1.room FROM bookings b1 JOIN bookings b2 ON b1.room = b2.room AND b1.id < b2.id "
    "WHERE b1.start_time < b2.end_time AND b2.start_time < b1.end_time ORDER BY b1.room"
)


def figure3_script(messages, role, response_model):
    name = response_model.__name__ if response_model else ""
    text = user_text(messages)
    if name == "CheckPlan":
        return NO_CHECKS
    if name == "PlannerReply":
        phase = phase_of(messages)
        if phase == "initial":
            return {
                "reason": "'overlapping' is ambiguous; check the time columns, then write the SQL",
                "plan": {
                    "id": "a",
                    "description": "find ambiguous phrases",
                    "tool": "detect_ambiguities",
                    "children": [
                        {
                            "id": "b",
                            "description": "look at booking times",
                            "tool": "inspect_columns",
                            "input": {"table": "bookings", "columns": ["start_time", "end_time"]},
                            "children": [{"id": "c", "description": "write the SQL", "tool": "generate_sql"}],
                        }
                    ],
                },
                "cursor": "a",
            }
        if phase == "select":
            return {"reason": "try the simpler reading first", "cursor": options_of(messages)[0]}
        failed = failed_of(messages)
        if "a count is not an overlap" in text:  # the reading itself was refuted: not its rewrite, the other reading
            other = [
                n
                for n in plan_nodes(messages)
                if n["status"] == "pending"
                and "time ranges overlap" in n["hypothesis"]
                and n["tool"] == "inspect_columns"
            ]
            if other:
                return {"reason": "the count reading was refuted; back to the other reading", "cursor": other[0]["id"]}
        if "unexplored alternative: " in text.replace("\n", " ") or "(nearest unexplored alternative: n" in text:
            suggested = text.split("nearest unexplored alternative: ")[1].split(")")[0]
            return {"reason": "the count reading was refuted; back to the other reading", "cursor": suggested}
        return {
            "reason": "the candidate does not parse: localise and repair the clause",
            "add": [
                {
                    "parent": failed,
                    "node": {
                        "id": "s",
                        "description": "split and fix the syntax error",
                        "tool": "split_and_fix",
                        "children": [{"id": "g", "description": "final SQL", "tool": "generate_sql"}],
                    },
                }
            ],
            "cursor": "s",
        }
    if name == "AmbiguityReport":
        return {
            "ambiguities": [
                {
                    "phrase": "overlapping",
                    "interpretations": [
                        {"description": "rooms with more than one booking in total", "sql_hint": "COUNT(*) > 1"},
                        {
                            "description": "bookings of the same room whose time ranges overlap",
                            "sql_hint": "b1.start_time < b2.end_time AND b2.start_time < b1.end_time",
                        },
                    ],
                    "settle_with_data": True,
                    "question": "",
                }
            ]
        }
    if name == "GeneratedSQL":
        if "repaired: " in text:
            return {"sql": OVERLAP, "rationale": "take the clause-level repair"}
        if is_rewrite(messages):  # written directly from the request under the branch's reading
            return {"sql": COUNT_SQL if "more than one booking" in text else OVERLAP, "rationale": "direct"}
        if "assume this reading): 'overlapping' means rooms with more than one booking" in text:
            return {"sql": COUNT_SQL, "rationale": "count bookings per room"}
        return {"sql": BROKEN_OVERLAP, "rationale": "self-join on overlapping ranges"}
    if name == "RepairedSQL":
        return {"sql": OVERLAP, "explanation": "WHERE had a doubled AND"}
    if name == "JudgeScores":
        if "COUNT(*)" in judged_sql(messages):
            return scores(3, "room B's bookings are on different days: a count is not an overlap", entail=2)
        return scores(9, "self-join on intersecting ranges answers the question")
    raise AssertionError(f"unexpected request {name}")


@pytest.fixture
def bookings_db(pg_db_factory):
    return pg_db_factory(BOOKINGS)


def test_figure3_rollback_after_refuted_branch_then_success(bookings_db):
    model = ScriptedChatModel(figure3_script)
    events = []
    run = repair(INTENT, ORIGINAL, bookings_db, model=model, on_event=events.append)

    assert run.status == "solved", run.render_text()
    assert run.final_sql == OVERLAP
    assert run.result is not None and run.result.ok and run.result.rows == [["A"]]
    tree = run.tree
    root = tree.nodes[tree.root]
    assert root.tool == "detect_ambiguities"
    branches = [tree.nodes[c] for c in root.children]
    assert [b.tool for b in branches] == ["inspect_columns", "inspect_columns"]  # planned subtree copied per reading
    assert "more than one booking" in branches[0].hypothesis and "overlap" in branches[1].hypothesis
    # the count branch ran first and its candidate was refuted by the judge
    count_leaf = tree.nodes[branches[0].children[0]]
    assert count_leaf.status == "refuted" and count_leaf.output.sql == COUNT_SQL
    assert count_leaf.verdict.passed is False
    # the alternative: first candidate does not parse, split_and_fix repairs it, the new leaf is accepted
    first_leaf = tree.nodes[branches[1].children[0]]
    assert first_leaf.status == "refuted" and "AND AND" in first_leaf.output.sql
    split = tree.nodes[first_leaf.children[0]]
    assert split.tool == "split_and_fix" and split.output.localisation.clause_at_error == "WHERE"
    final = tree.nodes[split.children[0]]
    assert final.status == "accepted" and run.final_node == final.id
    # the repaired candidate's direct-rewrite sibling gave the same rows: the judge approved it knowing that, and
    # the agreement corroborates both (it does not verify them: both may share one misreading)
    rewrite = tree.nodes[split.children[1]]
    assert rewrite.input == {"strategy": "rewrite"} and rewrite.verdict.method == "llm"
    assert rewrite.verdict.corroborated and final.verdict.corroborated
    assert not (rewrite.verdict.confirmed or final.verdict.confirmed)
    evidence = final.verdict.evidence[0]
    assert f"{rewrite.id} (direct rewrite from the request" in evidence and "written independently" in evidence
    # the count reading's rewrite was planned beside its refuted leaf, but the planner moved to the other reading
    skipped = tree.nodes[branches[0].children[1]]
    assert skipped.input == {"strategy": "rewrite"} and skipped.status == "pending"
    order = [n.id for n in tree.executed()]
    assert order.index(count_leaf.id) < order.index(branches[1].id)  # rollback happened after the refutation
    # every node records its input, output, timing and tokens
    assert all(n.resolved_input is not None and n.ms > 0 for n in tree.executed())
    assert final.llm_calls == 2 and final.prompt_tokens > 0  # generate + judge
    assert run.usage.llm_calls == len(model.calls)
    assert {e.type for e in events} >= {"plan", "node_start", "node_end", "candidate", "final"}
    plan_event = next(e for e in events if e.type == "plan")
    assert "detect_ambiguities" in plan_event.text and plan_event.tree.nodes["n0"].tool == "detect_ambiguities"
    text = tree.render_text()
    assert "↩" in text and "★" in text and "hypothesis" in text
    assert run.model_dump_json()  # JSON-serialisable


def test_linear_mode_keeps_one_path(bookings_db):
    """Linear ablation: one reading only, no rollback: refuted candidates are followed by more leaves."""
    model = ScriptedChatModel(figure3_script_linear)
    run = repair(INTENT, ORIGINAL, bookings_db, model=model, mode="linear", budget=Budget(max_nodes=5))
    tree = run.tree
    assert all(len(n.children) <= 1 for n in tree.nodes.values())
    assert all("time ranges" not in n.hypothesis for n in tree.nodes.values())  # the second reading never exists
    assert run.status == "best_effort"  # never verified: stuck on the count reading
    assert run.final_sql == COUNT_SQL


def figure3_script_linear(messages, role, response_model):
    name = response_model.__name__ if response_model else ""
    if name == "PlannerReply" and phase_of(messages) == "revise":
        failed = failed_of(messages)
        return {
            "reason": "try again on the same path",
            "add": [{"parent": failed, "node": {"id": "x", "tool": "generate_sql", "description": "again"}}],
            "cursor": "x",
        }
    return figure3_script(messages, role, response_model)


def test_planned_draft_is_not_copied_into_each_reading(bookings_db):
    """A draft the planner attached before the readings existed fits one reading at most: the copies
    under each branch drop it (and its instructions), and generate_sql writes each reading's own SQL from its hypothesis."""
    prompts: list[str] = []

    def script(messages, role, response_model):
        name = response_model.__name__ if response_model else ""
        if name == "PlannerReply" and phase_of(messages) == "initial":
            return {
                "reason": "ambiguous; I already have a draft",
                "plan": {
                    "id": "a",
                    "tool": "detect_ambiguities",
                    "description": "readings",
                    "children": [
                        {
                            "id": "g",
                            "tool": "generate_sql",
                            "description": "write it",
                            "input": {"sql": COUNT_SQL, "instructions": "keep ORDER BY room"},
                        }
                    ],
                },
                "cursor": "a",
            }
        if name == "GeneratedSQL":
            prompts.append(user_text(messages))
            if "assume this reading): 'overlapping' means rooms with more than one" in user_text(messages):
                return {"sql": COUNT_SQL, "rationale": "count"}
            return {"sql": OVERLAP, "rationale": "overlap"}
        return figure3_script(messages, role, response_model)

    run = repair(INTENT, ORIGINAL, bookings_db, model=ScriptedChatModel(script))
    tree = run.tree
    children = [tree.nodes[c] for c in tree.nodes[tree.root].children]
    branches = [b for b in children if b.input.get("strategy") != "rewrite"]  # the readings, not their rewrites
    assert [b.tool for b in branches] == ["generate_sql", "generate_sql"]
    assert all(b.input == {} for b in branches)  # the draft and the free-text instructions are both dropped
    assert all("keep ORDER BY room" not in p for p in prompts)
    assert all("Draft proposed by the planner" not in p for p in prompts)
    assert branches[0].output.sql == COUNT_SQL and branches[0].status == "refuted"
    assert branches[1].output.sql == OVERLAP and branches[1].status == "accepted"
    assert run.status == "solved" and run.final_sql == OVERLAP
