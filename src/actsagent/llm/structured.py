"""Turn a model's text into a validated pydantic instance, tolerating the usual wrapping.

Candidates are tried in order: the whole text, each fenced code block (```json or bare), then
each balanced ``{...}`` in the text. Each candidate is read as strict JSON, then as JSON5 (trailing
commas, single-quoted strings, comments, unquoted keys), then as a Python literal
(``True``/``None``, via ``ast.literal_eval``, which evaluates no code). The first candidate that
validates wins; otherwise the errors of the most promising one are reported for the repair round.
``<think>...</think>`` blocks of reasoning models are dropped first.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

import json5
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_MAX_CANDIDATES = 20
_MAX_LITERAL_CHARS = 200_000  # ast.literal_eval is safe but not cheap on huge inputs


class OutputInvalid(Exception):
    """The text holds no object that validates; ``errors`` are short, model-readable reasons."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def parse_structured(text: str, model: type[T]) -> T:
    """The first JSON-ish object in ``text`` that validates as ``model``; raises OutputInvalid."""
    best_errors: list[str] | None = None
    best_is_object = False
    text = _THINK.sub("", text)  # a reasoning model's drafts must not win over its answer
    for cand in _candidates(text):
        data = loads_tolerant(cand)
        if data is _NOTHING:
            continue
        try:
            return model.model_validate(data)
        except ValidationError as e:
            # report the first decoded object (a bare string or number says little about the fix)
            if best_errors is None or (isinstance(data, dict) and not best_is_object):
                best_errors, best_is_object = _format(e), isinstance(data, dict)
    if best_errors is not None:
        raise OutputInvalid(best_errors)
    raise OutputInvalid(["no JSON object found in the answer; reply with a single JSON object"])


_NOTHING = object()


def loads_tolerant(text: str) -> Any:
    """Strict JSON, else JSON5, else a Python literal; ``_NOTHING`` when none reads it."""
    text = text.strip()
    if not text:
        return _NOTHING
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json5.loads(text)
    except (ValueError, TypeError, RecursionError):
        pass
    if text[0] in "{[" and len(text) <= _MAX_LITERAL_CHARS:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return _NOTHING


def _candidates(text: str) -> Iterator[str]:
    seen: set[str] = set()
    count = 0

    def fresh(c: str) -> bool:
        nonlocal count
        c = c.strip()
        if not c or c in seen or count >= _MAX_CANDIDATES:
            return False
        seen.add(c)
        count += 1
        return True

    if fresh(text):
        yield text.strip()
    for m in _FENCE.finditer(text):
        if fresh(m.group(2)):
            yield m.group(2).strip()
    for obj in balanced_objects(text):
        if fresh(obj):
            yield obj


def balanced_objects(text: str) -> Iterator[str]:
    """Each top-level ``{...}`` span, skipping braces inside quoted strings."""
    i, n = 0, len(text)
    while i < n:
        start = text.find("{", i)
        if start < 0:
            return
        end = _match(text, start, quotes="\"'")
        if end is None:  # an apostrophe in prose can unbalance single quotes: retry with double only
            end = _match(text, start, quotes='"')
        if end is None:
            i = start + 1
            continue
        yield text[start : end + 1]
        i = end + 1


def _match(text: str, start: int, *, quotes: str) -> int | None:
    depth = 0
    quote: str | None = None
    escaped = False
    for j in range(start, len(text)):
        ch = text[j]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in quotes:
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _format(e: ValidationError) -> list[str]:
    out = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
        out.append(f"{loc}: {err.get('msg', 'invalid')}")
    return out
