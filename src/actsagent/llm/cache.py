"""On-disk response cache, which doubles as record/replay for tests and reproducible evaluations.

One readable JSON file per exchange, ``<dir>/<key>.json``, where ``key`` is the sha256 of the
model, the messages, the sampling parameters and the response schema. The endpoint URL is not
part of the key, so answers recorded through one endpoint (e.g. the llm-relay) replay anywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from actsagent.llm.errors import ReplayMiss


class CachedReply(BaseModel, frozen=True):
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False


def cache_key(*, model: str, messages: list[dict], params: dict[str, Any], schema: dict | None) -> str:
    payload = {"model": model, "messages": messages, "params": params, "schema": schema}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """``mode``: "off" (never read or write), "read_write", or "replay_only" (a miss raises ReplayMiss)."""

    def __init__(self, directory: Path, mode: str):
        self.directory = Path(directory)
        self.mode = mode

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str, *, describe: str = "") -> CachedReply | None:
        if not self.enabled:
            return None
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return CachedReply.model_validate(data["response"])
        except FileNotFoundError:
            pass
        except (ValueError, KeyError, TypeError):
            if self.mode != "replay_only":
                return None  # a damaged entry is re-fetched and overwritten
        if self.mode == "replay_only":
            raise ReplayMiss(
                f"no recorded LLM response for {describe or 'this request'} (key {key[:12]}…) in {self.directory}; "
                "the prompt, model or parameters changed since recording. Re-record with cache mode "
                "'read_write' against a live endpoint (see evals/relay_smoke.py).",
                key=key,
                path=str(path),
            )
        return None

    def put(self, key: str, reply: CachedReply, *, request: dict[str, Any]) -> None:
        """Write atomically (temp file + rename) so parallel runs never see half a file."""
        if self.mode != "read_write":
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        doc = {
            "key": key,
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "request": request,
            "response": reply.model_dump(),
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f, ensure_ascii=False, indent=1)
            os.replace(tmp, self.path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
