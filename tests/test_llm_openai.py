"""OpenAIChatModel against a local fake OpenAI-compatible server (never a real model).

The server answers from a queue of canned replies and records every request it received, so
the tests see exactly what the SDK sent: response_format, retries, the repair round.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

import actsagent.llm as llm
from actsagent.llm import (
    LLMConfig,
    ModelRequestsBlocked,
    OpenAIChatModel,
    ProviderFailed,
    ReplayMiss,
    RoleModels,
    StructuredOutputError,
    get_chat_model,
    openai_model,
)

MSG = [{"role": "user", "content": "Which column holds the order date?"}]


class Answer(BaseModel):
    column: str
    confidence: float


def completion(
    content: str, *, model: str = "gpt-4o-mini", prompt_tokens: int = 1000, completion_tokens: int = 500
) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error(status: int, message: str) -> tuple[int, dict]:
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}


class FakeOpenAI:
    """Queue of replies: (status, body) tuples, ("sleep", seconds, reply) for timeouts, or raw bytes."""

    def __init__(self) -> None:
        self.replies: list = []
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                reply = fake.replies.pop(0) if fake.replies else error(500, "fake server: no reply queued")
                if reply[0] == "sleep":
                    time.sleep(reply[1])
                    reply = reply[2]
                status, payload = reply[0], reply[1]
                headers = reply[2] if len(reply) > 2 else {}
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake(monkeypatch):
    server = FakeOpenAI()
    monkeypatch.setattr(openai_model, "ALLOW_MODEL_REQUESTS", True)  # lifted for this local server only
    yield server
    server.close()


def config(fake: FakeOpenAI, tmp_path, **kw) -> LLMConfig:
    values = dict(
        base_url=fake.url,
        api_key="test-key",
        timeout_s=2.0,
        max_retries=3,
        retry_initial_s=0.01,
        retry_max_s=0.05,
        retry_jitter_s=0.01,
        cache_dir=tmp_path / "cache",
    )
    values.update(kw)
    return LLMConfig(**values)


def test_json_schema_response_format_and_cost(fake, tmp_path):
    fake.replies = [(200, completion('{"column": "ordered_at", "confidence": 0.9}'))]
    model = OpenAIChatModel(config(fake, tmp_path))
    resp = model.complete(MSG, role="tools", response_model=Answer)
    assert resp.parsed == Answer(column="ordered_at", confidence=0.9)
    sent = fake.requests[0]
    assert sent["model"] == "gpt-4o-mini" and sent["temperature"] == 0.0
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["column", "confidence"]
    # gpt-4o-mini: $0.15 / $0.60 per 1M tokens
    assert resp.usage.prompt_tokens == 1000 and resp.usage.completion_tokens == 500
    assert resp.usage.cost_usd == pytest.approx(1000 * 0.15e-6 + 500 * 0.60e-6)
    assert resp.usage.price_known and not resp.cached and resp.attempts == 1


def test_role_models_and_unknown_price(fake, tmp_path):
    fake.replies = [(200, completion("fine", model="my-local-model"))]
    cfg = config(fake, tmp_path, models=RoleModels(planner="my-local-model"))
    resp = OpenAIChatModel(cfg).complete(MSG, role="planner")
    assert fake.requests[0]["model"] == "my-local-model"
    assert resp.usage.cost_usd == 0 and not resp.usage.price_known


def test_rate_limit_then_success(fake, tmp_path):
    fake.replies = [error(429, "slow down") + ({"Retry-After": "0.02"},), (200, completion("ok"))]
    t0 = time.perf_counter()
    resp = OpenAIChatModel(config(fake, tmp_path)).complete(MSG)
    assert resp.text == "ok" and resp.attempts == 2 and len(fake.requests) == 2
    assert time.perf_counter() - t0 >= 0.02  # waited (Retry-After honoured, capped by retry_max_s)


def test_server_errors_and_timeout_retried(fake, tmp_path):
    fake.replies = [
        error(500, "boom"),
        error(503, "overloaded"),
        ("sleep", 0.6, (200, completion("late"))),
        (200, completion("ok")),
    ]
    resp = OpenAIChatModel(config(fake, tmp_path, timeout_s=0.3)).complete(MSG)
    assert resp.text == "ok" and resp.attempts == 4


def test_retries_exhausted(fake, tmp_path):
    fake.replies = [error(500, "down")] * 3
    with pytest.raises(ProviderFailed) as e:
        OpenAIChatModel(config(fake, tmp_path, max_retries=2)).complete(MSG)
    assert e.value.status == 500 and e.value.attempts == 3 and len(fake.requests) == 3
    assert "down" in str(e.value)


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_not_retried(fake, tmp_path, status):
    fake.replies = [error(status, "nope"), (200, completion("never"))]
    with pytest.raises(ProviderFailed) as e:
        OpenAIChatModel(config(fake, tmp_path)).complete(MSG)
    assert e.value.status == status and len(fake.requests) == 1


def test_response_format_refused_falls_back_and_remembers(fake, tmp_path):
    fake.replies = [
        error(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported"),
        (200, completion('Sure: ```json\n{"column": "ordered_at", "confidence": 1}\n```')),
        (200, completion('{"column": "status", "confidence": 0.5}')),
    ]
    model = OpenAIChatModel(config(fake, tmp_path))
    first = model.complete(MSG, response_model=Answer)
    assert first.parsed.column == "ordered_at" and first.attempts == 2
    assert "response_format" in fake.requests[0] and "response_format" not in fake.requests[1]
    assert "JSON schema" in fake.requests[1]["messages"][-1]["content"]  # the schema is described instead
    assert model.complete(MSG, response_model=Answer).parsed.column == "status"
    assert "response_format" not in fake.requests[2]  # remembered: no second refusal


def test_malformed_output_repaired_then_error(fake, tmp_path):
    fake.replies = [
        (200, completion('{"column": "ordered_at"}')),
        (200, completion('{"column": "ordered_at", "confidence": 0.7}')),
        (200, completion("no idea")),
        (200, completion("still no idea")),
    ]
    model = OpenAIChatModel(config(fake, tmp_path))
    resp = model.complete(MSG, response_model=Answer)
    assert resp.repaired and resp.parsed.confidence == 0.7
    assert "confidence" in fake.requests[1]["messages"][-1]["content"]
    assert resp.usage.prompt_tokens == 2000  # both exchanges counted
    with pytest.raises(StructuredOutputError) as e:
        model.complete(MSG, response_model=Answer, temperature=0.2)
    assert e.value.raw_text == "still no idea"


def test_malformed_http_body_is_a_retryable_provider_error(fake, tmp_path):
    fake.replies = [(200, b"{this is not json"), (200, completion("ok"))]
    resp = OpenAIChatModel(config(fake, tmp_path)).complete(MSG)
    assert resp.text == "ok" and resp.attempts == 2


def test_guard_blocks_requests(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(openai_model, "ALLOW_MODEL_REQUESTS", False)
    fake.replies = [(200, completion("ok"))]
    with pytest.raises(ModelRequestsBlocked):
        OpenAIChatModel(config(fake, tmp_path)).complete(MSG)
    assert fake.requests == []


def test_guard_is_set_by_conftest():
    assert openai_model.ALLOW_MODEL_REQUESTS is False
    with llm.allow_model_requests():
        assert openai_model.ALLOW_MODEL_REQUESTS is True
    assert openai_model.ALLOW_MODEL_REQUESTS is False


def test_cache_record_then_replay_without_requests(fake, tmp_path, monkeypatch):
    fake.replies = [(200, completion('{"column": "ordered_at", "confidence": 0.9}'))]
    rec = OpenAIChatModel(config(fake, tmp_path, cache_mode="read_write"))
    first = rec.complete(MSG, response_model=Answer)
    again = rec.complete(MSG, response_model=Answer)
    assert not first.cached and again.cached and again.attempts == 0 and len(fake.requests) == 1
    assert again.parsed == first.parsed and again.usage == first.usage
    files = list((tmp_path / "cache").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["request"]["messages"] == MSG

    # replay_only: served from the recording with the guard down and no endpoint at all
    monkeypatch.setattr(openai_model, "ALLOW_MODEL_REQUESTS", False)
    replay = get_chat_model(LLMConfig(cache_mode="replay_only", cache_dir=tmp_path / "cache"))
    assert replay.complete(MSG, response_model=Answer).parsed == first.parsed
    # a different request (other temperature) is a miss: clear error, nothing sent
    with pytest.raises(ReplayMiss, match=r"[Rr]e-record"):
        replay.complete(MSG, response_model=Answer, temperature=0.5)
    # a different schema is a different key too
    with pytest.raises(ReplayMiss):
        replay.complete(MSG)
    assert len(fake.requests) == 1


def test_cache_off_always_sends(fake, tmp_path):
    fake.replies = [(200, completion("a")), (200, completion("b"))]
    model = OpenAIChatModel(config(fake, tmp_path, cache_mode="off"))
    assert [model.complete(MSG).text, model.complete(MSG).text] == ["a", "b"]
    assert not (tmp_path / "cache").exists()
