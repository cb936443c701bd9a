"""Structured outputs through the shared ChatModel path, driven by the scripted model."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from actsagent.errors import LLMUnavailable
from actsagent.llm import (
    FailingChatModel,
    OutputInvalid,
    ProviderError,
    ProviderFailed,
    ScriptedChatModel,
    ScriptedReply,
    ScriptExhausted,
    StructuredOutputError,
    parse_structured,
    scripted_config,
)

MSG = [{"role": "system", "content": "You plan."}, {"role": "user", "content": "Fix the query."}]


class Step(BaseModel):
    tool: str
    reason: str = ""


class Plan(BaseModel):
    steps: list[Step] = Field(min_length=1)
    cursor: int = 0


GOOD = {"steps": [{"tool": "run_sql", "reason": "see the error"}], "cursor": 0}


@pytest.mark.parametrize(
    "text",
    [
        '{"steps": [{"tool": "run_sql"}]}',
        'Here is the plan:\n```json\n{"steps": [{"tool": "run_sql"}]}\n```\nGood luck.',
        '```\n{"steps": [{"tool": "run_sql"}]}\n```',
        'Sure! {"steps": [{"tool": "run_sql", "reason": "a {brace} in a string"}]} done',
        "{'steps': [{'tool': 'run_sql', 'reason': \"it's\"}],}",  # single quotes + trailing comma (JSON5)
        '{"steps": [{"tool": "run_sql",},],}',
        "{'steps': [{'tool': 'run_sql', 'reason': None}], 'cursor': 0}".replace("None", "'x'"),
        'Thinking... {not json} then {"steps": [{"tool": "run_sql"}]}',
    ],
)
def test_tolerant_extraction(text):
    plan = parse_structured(text, Plan)
    assert plan.steps[0].tool == "run_sql"


def test_python_literal_tolerated():
    assert parse_structured("{'steps': [{'tool': 'x'}], 'cursor': True}", Plan).cursor == 1


def test_extraction_reports_validation_errors():
    with pytest.raises(OutputInvalid) as e:
        parse_structured('{"steps": []}', Plan)
    assert any(err.startswith("steps:") for err in e.value.errors)
    with pytest.raises(OutputInvalid) as e:
        parse_structured("I cannot help with that.", Plan)
    assert "no JSON object" in e.value.errors[0]


def test_good_json_parsed_in_one_call():
    model = ScriptedChatModel([GOOD])
    resp = model.complete(MSG, role="planner", response_model=Plan)
    assert isinstance(resp.parsed, Plan) and resp.parsed.steps[0].tool == "run_sql"
    assert not resp.repaired and resp.attempts == 1 and len(model.calls) == 1
    assert model.calls[0].role == "planner" and model.calls[0].response_model == "Plan"


def test_plain_text_completion_has_no_parsed():
    resp = ScriptedChatModel(["just words"]).complete(MSG)
    assert resp.text == "just words" and resp.parsed is None


def test_malformed_then_repaired():
    model = ScriptedChatModel(['{"steps": [{"reason": "no tool"}]}', Plan.model_validate(GOOD)])
    resp = model.complete(MSG, role="planner", response_model=Plan)
    assert resp.repaired and resp.parsed == Plan.model_validate(GOOD)
    assert resp.attempts == 2
    repair = model.calls[1]
    assert repair.purpose == "repair"
    # the repair round shows the model its own answer and the validation error
    assert repair.messages[-2] == {"role": "assistant", "content": '{"steps": [{"reason": "no tool"}]}'}
    assert "steps.0.tool" in repair.messages[-1]["content"]
    assert [r.purpose for r in model.ledger.records()] == ["answer", "repair"]


def test_still_malformed_raises_structured_output_error():
    model = ScriptedChatModel(["not json at all", '{"steps": "nope"}'])
    with pytest.raises(StructuredOutputError) as e:
        model.complete(MSG, response_model=Plan)
    err = e.value
    assert err.raw_text == '{"steps": "nope"}' and err.first_text == "not json at all"
    assert err.errors and err.schema_name == "Plan"
    assert err.summary()["kind"] == "structured_output"
    assert len(model.calls) == 2  # exactly one repair round
    assert err.usage.total_tokens > 0


def test_callable_script_answers_from_history():
    def fn(messages, role, response_model):
        if role == "judge":
            return {"steps": [{"tool": "judge"}]}
        return "plain " + messages[-1]["content"]

    model = ScriptedChatModel(fn)
    assert model.complete(MSG).text == "plain Fix the query."
    assert model.complete(MSG, role="judge", response_model=Plan).parsed.steps[0].tool == "judge"


def test_role_keyed_script_and_exhaustion():
    model = ScriptedChatModel({"planner": [GOOD], "judge": ["yes"]})
    assert model.complete(MSG, role="judge").text == "yes"
    assert model.complete(MSG, role="planner", response_model=Plan).parsed
    with pytest.raises(ScriptExhausted, match="role 'planner'"):
        model.complete(MSG, role="planner")
    with pytest.raises(ScriptExhausted, match="role 'tools'"):
        model.complete(MSG)


def test_provider_errors_retried_then_success():
    model = ScriptedChatModel(
        [ProviderError.rate_limited(), ProviderError.server_error(), TimeoutError("slow"), "ok"],
        config=scripted_config(max_retries=3),
    )
    resp = model.complete(MSG)
    assert resp.text == "ok" and resp.attempts == 4 and len(model.calls) == 4


def test_retries_exhausted_raise_llm_unavailable():
    model = ScriptedChatModel([ProviderError.rate_limited()] * 3, config=scripted_config(max_retries=2))
    with pytest.raises(LLMUnavailable) as e:
        model.complete(MSG)
    assert isinstance(e.value, ProviderFailed) and e.value.status == 429 and e.value.attempts == 3
    assert "retries exhausted" in str(e.value)


def test_bad_request_not_retried():
    model = ScriptedChatModel([ProviderError.bad_request("model not found", status=404), "never"])
    with pytest.raises(ProviderFailed) as e:
        model.complete(MSG)
    assert e.value.status == 404 and e.value.attempts == 1 and not e.value.retryable
    assert model.remaining == 1


def test_non_provider_exception_propagates_as_bug():
    model = ScriptedChatModel([KeyError("bug")])
    with pytest.raises(KeyError):
        model.complete(MSG)


def test_messages_are_validated():
    with pytest.raises(ValueError):
        ScriptedChatModel(["x"]).complete([{"role": "user"}])
    with pytest.raises(ValueError):
        ScriptedChatModel(["x"]).complete([])


def test_scripted_reply_token_counts():
    resp = ScriptedChatModel([ScriptedReply(text="hi", prompt_tokens=100, completion_tokens=7)]).complete(MSG)
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (100, 7)


def test_failing_model_retries_then_fails():
    model = FailingChatModel(config=scripted_config(max_retries=2))
    with pytest.raises(ProviderFailed) as e:
        model.complete(MSG)
    assert e.value.status == 503 and e.value.attempts == 3 and len(model.calls) == 3
    with pytest.raises(ProviderFailed) as e:
        FailingChatModel(ProviderError.bad_request("invalid api key", status=401)).complete(MSG)
    assert e.value.attempts == 1 and "invalid api key" in str(e.value)


def test_reasoning_blocks_are_ignored():
    text = '<think>maybe {"steps": [{"tool": "judge"}]}</think>\n{"steps": [{"tool": "run_sql"}]}'
    assert parse_structured(text, Plan).steps[0].tool == "run_sql"


def test_prompt_mode_describes_the_schema_in_the_messages():
    model = ScriptedChatModel([GOOD], config=scripted_config(structured_output="prompt"))
    assert model.complete(MSG, response_model=Plan).parsed
    sent = model.calls[0].messages
    assert sent[:-1] == MSG[:-1] and sent[-1]["content"].startswith("Fix the query.")
    assert '"required": ["steps"]' in sent[-1]["content"]
