"""A user's glossary: domain terms and descriptions of tables and columns, as JSON or TOML.

    {"terms": {"k12": "kindergarten through grade 12"},
     "tables": {"frpm": "free or reduced-price meal counts per school"},
     "columns": {"frpm.cnt_k12": "number of K-12 students eligible for free meals"}}

Descriptions from the glossary outrank templated and LLM-written ones; terms are explained wherever
an identifier contains them and expand a question that uses them.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, field_validator

from actsagent.errors import UserError

MAX_BYTES = 2_000_000
MAX_TEXT = 1000


class Glossary(BaseModel):
    terms: dict[str, str] = Field(default_factory=dict)
    tables: dict[str, str] = Field(default_factory=dict)
    columns: dict[str, str] = Field(default_factory=dict)  # "table.column" -> description

    @field_validator("terms", "tables", "columns")
    @classmethod
    def _bounded(cls, v: dict[str, str]) -> dict[str, str]:
        if len(v) > 20_000:
            raise ValueError("more than 20000 entries")
        for k, text in v.items():
            if not k.strip() or len(k) > 200:
                raise ValueError(f"bad key {k[:40]!r}: empty or longer than 200 characters")
            if len(text) > MAX_TEXT:
                raise ValueError(f"the entry for {k[:40]!r} is longer than {MAX_TEXT} characters")
        return {k.strip(): " ".join(text.split()) for k, text in v.items()}


def load_glossary(path: str | Path) -> Glossary:
    """Read a glossary file (``.json`` or ``.toml``); a bad file is one clear error."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"glossary file not found: {p}")
    if p.stat().st_size > MAX_BYTES:
        raise UserError(f"glossary {p.name} is larger than {MAX_BYTES // 1_000_000} MB")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"glossary {p.name}: not UTF-8 text (offset {e.start})") from e
    try:
        data = tomllib.loads(text) if p.suffix.lower() == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise UserError(
            f"glossary {p.name}: not valid {'TOML' if p.suffix.lower() == '.toml' else 'JSON'}: "
            f"{str(e).splitlines()[0]}"
        ) from e
    if not isinstance(data, dict):
        raise UserError(f"glossary {p.name}: expected an object with terms, tables and columns")
    unknown = set(data) - {"terms", "tables", "columns"}
    if unknown:
        raise UserError(
            f"glossary {p.name}: unknown section(s) {', '.join(sorted(unknown))} (use terms, tables, columns)"
        )
    try:
        return Glossary.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        raise UserError(f"glossary {p.name}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from e
