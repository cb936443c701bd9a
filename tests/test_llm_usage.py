"""Usage accounting, the cache through the scripted model, configuration from the environment."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from actsagent.errors import UserError
from actsagent.llm import (
    LLMConfig,
    ModelPrice,
    ReplayMiss,
    RoleModels,
    ScriptedChatModel,
    ScriptedReply,
    UsageLedger,
    get_chat_model,
    llm_available,
    scripted_config,
)

MSG = [{"role": "user", "content": "x" * 400}]


def priced(**kw) -> LLMConfig:
    return scripted_config(
        models=RoleModels(planner="big", tools="small", judge="mystery"),
        prices={"big": ModelPrice(input=10, output=30), "small": ModelPrice(input=1, output=2)},
        **kw,
    )


def test_costs_per_call_and_unknown_price_flag():
    model = ScriptedChatModel(
        [ScriptedReply(text="a", prompt_tokens=1_000_000, completion_tokens=100_000)] * 3, config=priced()
    )
    assert model.complete(MSG, role="planner").usage.cost_usd == pytest.approx(10 + 3)
    assert model.complete(MSG, role="tools").usage.cost_usd == pytest.approx(1 + 0.2)
    judge = model.complete(MSG, role="judge").usage
    assert judge.cost_usd == 0 and not judge.price_known
    tot = model.ledger.totals()
    assert tot.calls == 3 and tot.cost_usd == pytest.approx(14.2) and tot.unpriced_models == ["mystery"]
    assert tot.prompt_tokens == 3_000_000 and tot.total_tokens == 3_300_000
    assert set(model.ledger.by_role()) == {"planner", "tools", "judge"}


def test_dated_model_names_use_the_base_price():
    cfg = LLMConfig()
    assert cfg.price_for("gpt-4o-mini-2024-07-18") == cfg.prices["gpt-4o-mini"]
    assert cfg.price_for("gpt-4o-2024-11-20") == cfg.prices["gpt-4o"]
    assert cfg.price_for("gpt-4o-minimal") is None


def test_ledger_labels_by_task_and_node_and_per_run_ledger():
    model = ScriptedChatModel(lambda m, r, s: "ok")
    run = UsageLedger()
    with run.task("t1"):
        with run.node("plan"):
            model.complete(MSG, role="planner")
        with run.node("judge"):
            model.complete(MSG, role="judge")
            model.complete(MSG, role="judge")
    model.complete(MSG)  # outside any run: only in the model's own ledger, unlabelled
    assert len(run) == 3 and len(model.ledger) == 4
    assert {r.task_id for r in run.records()} == {"t1"}
    nodes = run.by_node(task_id="t1")
    assert nodes["plan"].calls == 1 and nodes["judge"].calls == 2
    assert run.totals(task_id="t1", node_id="judge").prompt_tokens == 2 * 100
    assert model.ledger.by_task()[None].calls == 1


def test_ledger_task_of_the_models_own_ledger_is_not_double_counted():
    model = ScriptedChatModel(["a", "b"])
    with model.ledger.task("t"):
        model.complete(MSG)
        model.complete(MSG)
    assert model.ledger.totals(task_id="t").calls == 2


def test_repair_usage_accumulates():
    class Out(BaseModel):
        n: int

    model = ScriptedChatModel(
        [
            ScriptedReply(text="oops", prompt_tokens=10, completion_tokens=1),
            ScriptedReply(text='{"n": 1}', prompt_tokens=20, completion_tokens=2),
        ]
    )
    resp = model.complete(MSG, response_model=Out)
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (30, 3)


def test_scripted_cache_hit_miss_and_replay(tmp_path):
    rec = ScriptedChatModel(["first", "second"], config=scripted_config(cache_mode="read_write", cache_dir=tmp_path))
    a = rec.complete(MSG)
    b = rec.complete(MSG)  # same request: served from disk, script not consumed
    c = rec.complete([{"role": "user", "content": "other"}])
    assert (a.text, b.text, c.text) == ("first", "first", "second")
    assert b.cached and not a.cached and len(rec.calls) == 2
    assert rec.ledger.totals().cached_calls == 1
    assert b.usage == a.usage  # tokens as recorded

    replay = ScriptedChatModel([], config=scripted_config(cache_mode="replay_only", cache_dir=tmp_path))
    assert replay.complete(MSG).text == "first"
    with pytest.raises(ReplayMiss) as e:
        replay.complete([{"role": "user", "content": "never recorded"}])
    assert e.value.key in e.value.path and str(tmp_path) in str(e.value)
    assert replay.calls == []


def test_damaged_cache_entry_is_refetched(tmp_path):
    model = ScriptedChatModel(["one", "two"], config=scripted_config(cache_mode="read_write", cache_dir=tmp_path))
    model.complete(MSG)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{broken")
    assert model.complete(MSG).text == "two"
    assert json.loads(entry.read_text())["response"]["text"] == "two"


def test_from_env_roles_and_prices(monkeypatch, tmp_path):
    monkeypatch.setenv("ACTSAGENT_MODEL", "m-default")
    monkeypatch.setenv("ACTSAGENT_MODEL_JUDGE", "m-judge")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("ACTSAGENT_LLM_CACHE", "replay_only")
    monkeypatch.setenv("ACTSAGENT_LLM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ACTSAGENT_LLM_PRICES", '{"m-default": {"input": 1, "output": 2}}')
    cfg = LLMConfig.from_env()
    assert (cfg.model_for("planner"), cfg.model_for("tools"), cfg.model_for("judge")) == (
        "m-default",
        "m-default",
        "m-judge",
    )
    assert cfg.cache_mode == "replay_only" and cfg.cache_dir == tmp_path and cfg.base_url.endswith("/v1")
    assert cfg.price_for("m-default") == ModelPrice(input=1, output=2) and cfg.price_for("gpt-4o")
    assert cfg.api_key is None
    monkeypatch.setenv("ACTSAGENT_LLM_CACHE", "sometimes")
    with pytest.raises(UserError, match="invalid LLM settings"):
        LLMConfig.from_env()
    with pytest.raises(UserError, match="unknown LLM role"):
        cfg.model_for("critic")


def test_api_key_is_not_leaked_in_repr(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    assert "sk-secret-123" not in repr(LLMConfig.from_env())


def test_llm_available_and_get_chat_model(monkeypatch):
    assert not llm_available() and get_chat_model() is None  # conftest: no credentials, ACTSAGENT_NO_LLM=1
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert not llm_available()  # still switched off
    monkeypatch.setenv("ACTSAGENT_NO_LLM", "0")
    assert llm_available() and get_chat_model() is not None
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert not llm_available()
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert llm_available()
    assert get_chat_model(LLMConfig()) is not None  # an explicit config always gives a model


def test_a_run_meters_each_completion_into_one_usage_model():
    from actsagent.tools import UsageMeter

    model = ScriptedChatModel(
        [ScriptedReply(text="a", prompt_tokens=1_000, completion_tokens=100)] * 2, config=priced()
    )
    meter = UsageMeter()
    meter.record(model.complete(MSG, role="planner"))
    meter.start_window()
    judged = model.complete(MSG, role="judge")  # "mystery" has no price
    meter.record(judged)
    total, window = meter.total, meter.window
    assert total.llm_calls == 2 and window.llm_calls == 1
    assert total.prompt_tokens > window.prompt_tokens == judged.usage.prompt_tokens > 0
    assert total.cost_usd > 0 and window.cost_usd == 0
    assert not total.price_known and not window.price_known  # a cost with an unpriced model in it is not the whole cost
    assert total.total_tokens == total.prompt_tokens + total.completion_tokens
