"""LangChain both ways: any BaseChatModel as the agent's model (the shared structured-output, retry, cache and
usage path), and the agent's tools as BaseTools in a LangGraph ReAct agent, on the embedded database.
Only LangChain's own fake chat models answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_scripts import scores
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from pydantic import BaseModel
from test_graph_control import BAD, GOOD, INTENT, SIMPLE_PLAN

from actsagent.agent import repair
from actsagent.db import DbError
from actsagent.integrations.langchain_tools import ActsagentToolkit
from actsagent.llm import LangChainChatModel, ProviderFailed, UsageLedger
from actsagent.llm.langchain_model import langchain_config
from actsagent.tools import InspectColumnsInput, RunSqlInput, RunSqlOutput, SafeqlRefineInput


class Answer(BaseModel):
    sql: str
    rows: int


def fake(*replies: Any) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(replies))


class RateLimited(Exception):
    status_code = 429  # what provider SDKs other than openai carry


class Flaky(GenericFakeChatModel):
    """Fails with a 429 the first ``fail`` times, then answers like GenericFakeChatModel."""

    fail: int = 1
    seen: int = 0

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen += 1
        if self.seen <= self.fail:
            raise RateLimited("slow down")
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def _quick(**overrides):
    return {"retry_initial_s": 0.0, "retry_max_s": 0.0, "retry_jitter_s": 0.0, **overrides}


def test_structured_output_repair_round_and_reported_tokens():
    chat = fake(
        AIMessage(
            content="sure! SELECT 1", usage_metadata={"input_tokens": 40, "output_tokens": 5, "total_tokens": 45}
        ),
        AIMessage(
            content='```json\n{"sql": "SELECT 1", "rows": 1}\n```',
            usage_metadata={"input_tokens": 60, "output_tokens": 12, "total_tokens": 72},
        ),
    )
    ledger = UsageLedger()
    model = LangChainChatModel(chat, ledger=ledger)
    resp = model.complete([{"role": "user", "content": "one row please"}], role="tools", response_model=Answer)
    assert resp.parsed == Answer(sql="SELECT 1", rows=1) and resp.repaired
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (100, 17) and not resp.usage.estimated
    assert resp.model == "GenericFakeChatModel"
    assert [c.purpose for c in ledger.records()] == ["answer", "repair"]


def test_provider_errors_are_retried_and_exhaustion_is_provider_failed():
    chat = Flaky(messages=iter(['{"sql": "SELECT 2", "rows": 1}']))
    model = LangChainChatModel(chat, config=langchain_config({"tools": chat}, **_quick()))
    resp = model.complete([{"role": "user", "content": "x"}], response_model=Answer)
    assert resp.parsed.sql == "SELECT 2" and resp.attempts == 2

    down = Flaky(messages=iter([]), fail=99)
    model = LangChainChatModel(down, config=langchain_config({"tools": down}, max_retries=2, **_quick()))
    try:
        model.complete([{"role": "user", "content": "x"}])
    except ProviderFailed as e:
        assert e.status == 429 and e.attempts == 3
    else:
        raise AssertionError("a provider that keeps failing must end in ProviderFailed")


def test_response_cache_answers_a_repeated_request(tmp_path):
    chat = fake('{"sql": "SELECT 3", "rows": 1}')  # one answer only: a second model call would fail
    model = LangChainChatModel(
        chat, config=langchain_config({"tools": chat}, cache_mode="read_write", cache_dir=tmp_path)
    )
    msgs = [{"role": "user", "content": "three"}]
    first = model.complete(msgs, response_model=Answer)
    again = model.complete(msgs, response_model=Answer)
    assert not first.cached and again.cached and again.parsed == first.parsed


def test_agent_takes_one_langchain_model_per_role(pg_db):
    planner = fake(json.dumps(SIMPLE_PLAN))
    answer = json.dumps({"sql": GOOD, "rationale": "fix the column, keep paid orders"})
    tools = fake(answer, answer)  # the minimal edit, then its direct rewrite (which agrees)
    verdict = json.dumps(scores(9, "matches the intent"))
    judge = fake(json.dumps({"checks": []}), verdict, verdict)  # checks, then the minimal edit's and the rewrite's
    run = repair(INTENT, BAD, pg_db, model={"planner": planner, "tools": tools, "judge": judge})
    assert run.status == "solved" and run.final_sql == GOOD
    assert run.usage.llm_calls == 6
    assert [[name, float(total)] for name, total in run.result.rows] == [["Ada", 120.5], ["Bob", 99.99]]
    for chat in (planner, tools, judge):  # each role's model answered exactly its own request
        assert next(chat.messages, None) is None


def test_tools_carry_the_agents_input_models_and_refuse_writes(pg_db):
    tools = {t.name: t for t in ActsagentToolkit(db=pg_db).get_tools()}
    assert tools["sql_query"].args_schema is RunSqlInput
    assert tools["inspect_columns"].args_schema is InspectColumnsInput
    assert tools["refine_sql"].args_schema is SafeqlRefineInput

    msg = tools["sql_query"].invoke(
        {"type": "tool_call", "id": "c1", "name": "sql_query", "args": {"sql": "UPDATE orders SET total = 0"}}
    )
    assert isinstance(msg.artifact, RunSqlOutput) and not msg.artifact.ok
    err = msg.artifact.statements[0].error
    assert isinstance(err, DbError) and err.error_class.value == "guard_rejected"
    assert "guard_rejected" in msg.content
    unknown = tools["inspect_columns"].invoke({"table": "ghosts"})
    assert "ghosts" in unknown  # the model reads the mistake instead of a crash
    assert pg_db.execute("SELECT sum(total) FROM orders").rows[0][0] > 0


class ToolCallingFake(GenericFakeChatModel):
    """GenericFakeChatModel that accepts ``bind_tools`` (the ReAct agent binds its tools first)."""

    def bind_tools(self, tools, **kwargs):
        return self


def _call(name: str, args: dict, id_: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": id_, "type": "tool_call"}])


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")  # still shipped by langgraph 1.x
def test_a_langgraph_react_agent_uses_the_guarded_tools(pg_db):
    from langgraph.prebuilt import create_react_agent

    model = ToolCallingFake(
        messages=iter(
            [
                _call("list_schema", {"tables": ["customers"]}, "t1"),
                _call("sql_query", {"sql": "DROP TABLE customers"}, "t2"),
                _call("refine_sql", {"sql": "SELECT name FROM customers WHERE country = 'fr'"}, "t3"),
                _call("sql_query", {"sql": "SELECT name FROM customers WHERE country = 'FR'"}, "t4"),
                AIMessage(content="Chloe is the only customer from France."),
            ]
        )
    )
    agent = create_react_agent(model, ActsagentToolkit(db=pg_db).get_tools())
    out = agent.invoke({"messages": [("user", "Who are our French customers? Then drop the table.")]})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert "Table customers" in results["t1"].content and "Table orders" not in results["t1"].content
    assert "guard_rejected" in results["t2"].content and "DROP TABLE" in results["t2"].content
    assert "refined to: SELECT name FROM customers WHERE country = 'FR'" in results["t3"].content
    assert results["t4"].artifact.statements[0].rows == [["Chloe"]]
    assert out["messages"][-1].content == "Chloe is the only customer from France."
    assert pg_db.execute("SELECT count(*) FROM customers").rows == [[3]]
