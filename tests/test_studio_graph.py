"""The graph ``langgraph dev`` serves: built through langgraph.json's factory, given a checkpointer the way the
LangGraph server attaches one, run with a scripted model through its clarification interrupt."""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import REPO
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_graph_control import BAD, GOOD, INTENT, clarify_script

from actsagent.errors import UserError
from actsagent.graphs.state import TreeState
from actsagent.integrations import studio
from actsagent.llm import ScriptedChatModel
from actsagent.tools import GenerateSqlOutput


def _factory():
    """Resolve langgraph.json's graph entry as the server does: a file path and an attribute."""
    spec = json.loads((REPO / "langgraph.json").read_text())["graphs"]["repair"]
    path, attr = spec.rsplit(":", 1)
    mod_spec = importlib.util.spec_from_file_location("studio_entry", REPO / path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return getattr(module, attr)


@pytest.fixture
def served(pg_db, monkeypatch):
    """The factory's graph over ``pg_db`` with the configured model being a scripted one."""
    import actsagent.llm

    monkeypatch.setattr(actsagent.llm, "get_chat_model", lambda *a, **k: ScriptedChatModel(clarify_script))
    monkeypatch.setattr(studio, "_open", {})
    make_graph = _factory()
    graph = make_graph({"configurable": {"db": pg_db.url}})
    yield graph.copy(update={"checkpointer": InMemorySaver()})  # what langgraph-api does with a factory's graph
    for db in studio._open.values():
        db.close()


def test_served_graph_pauses_for_clarification_and_resumes(served):
    config = {"configurable": {"thread_id": "studio-1"}}
    out = served.invoke({"intent": INTENT, "original_sql": BAD}, config)
    (question,) = out["__interrupt__"]
    assert question.value["question"] == "Should refunded orders count as paid?"
    assert len(question.value["options"]) == 2
    snap = served.get_state(config, subgraphs=True)
    assert snap.next == ("repair",) and snap.tasks[0].state.next == ("clarify",)

    final = TreeState(**served.invoke(Command(resume="1"), config))
    assert final.final is not None and final.final.status == "solved" and final.final.node is not None
    node = final.tree.nodes[final.final.node]
    assert isinstance(node.output, GenerateSqlOutput) and node.output.sql == GOOD  # the first reading: paid orders only
    assert any(n.status == "skipped" for n in final.tree.nodes.values())


def test_served_graph_input_is_checked(served):
    with pytest.raises(UserError, match="needs an intent"):
        served.invoke({"intent": "  ", "original_sql": BAD}, {"configurable": {"thread_id": "studio-2"}})
    assert set(served.get_input_jsonschema()["properties"]) == {"intent", "original_sql", "mode"}
