"""Per-caller settings (``app.tenant_id=42``) that actsagent applies with SET LOCAL in every transaction.

Row-level-security policies read them with ``current_setting('app.tenant_id', true)``. Only custom,
dotted names are accepted (a typo or a server parameter such as ``work_mem`` is refused), and values
are sent as literals, never spliced. The read-only role cannot change them from SQL: set_config is
revoked from it, and a ``SET`` statement is a statement of its own, in a transaction that is rolled back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, field_validator

from actsagent.errors import UserError

_PART = r"[A-Za-z_][A-Za-z0-9_]{0,62}"
_NAME = re.compile(rf"^{_PART}(\.{_PART})+$")
# prefixes of real parameters (extensions, procedural languages), which are not per-caller settings
_RESERVED = (
    "pg_",
    "plpgsql",
    "plperl",
    "plpython",
    "pltcl",
    "auto_explain",
    "pg_stat_statements",
    "pgaudit",
    "postgres_fdw",
    "session_preload",
    "vector",
    "hnsw",
    "ivfflat",
    "actsagent",
)
MAX_VALUE_LEN = 1000


class SessionSettings(BaseModel, frozen=True):
    """Custom settings for one caller, applied with ``SET LOCAL name = 'value'`` in each transaction."""

    values: dict[str, str] = {}

    @field_validator("values", mode="before")
    @classmethod
    def _check(cls, values: object) -> dict[str, str]:
        if not isinstance(values, Mapping):
            raise UserError('settings must map names to values, e.g. {"app.tenant_id": 42}')
        out: dict[str, str] = {}
        for name, value in values.items():
            out[check_name(name)] = check_value(name, value)
        return out

    def merged(self, other: SessionSettings | Mapping[str, object] | None) -> SessionSettings:
        return SessionSettings(values={**self.values, **as_settings(other).values})

    def __bool__(self) -> bool:
        return bool(self.values)


def check_name(name: str) -> str:
    """A dotted custom setting name (``app.tenant_id``), lower-cased as PostgreSQL folds it."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise UserError(
            f"setting name {name!r} is not a dotted custom name such as app.tenant_id "
            "(letters, digits and _ in each part)"
        )
    low = name.lower()
    if low.split(".", 1)[0].startswith(_RESERVED):
        raise UserError(
            f"setting {name!r} belongs to an extension or to actsagent; use your own prefix, e.g. app.tenant_id"
        )
    return low


def check_value(name: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UserError(f"setting {name}: the value must be text or a number")
    text = str(value)
    if "\x00" in text or len(text) > MAX_VALUE_LEN:
        raise UserError(f"setting {name}: the value must be at most {MAX_VALUE_LEN} characters, without NUL")
    return text


def parse_assignments(items: Iterable[str]) -> SessionSettings:
    """``["app.tenant_id=42", ...]`` (the CLI's ``--setting``) as settings; a bad item is a UserError."""
    values: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--setting {item!r}: write NAME=VALUE, e.g. app.tenant_id=42")
        values[check_name(name.strip())] = check_value(name, value)
    return SessionSettings(values=values)


def as_settings(settings: SessionSettings | Mapping[str, object] | None) -> SessionSettings:
    """Settings from a mapping (checked: a bad name or value is a UserError) or as given."""
    return (
        settings
        if isinstance(settings, SessionSettings)
        else SessionSettings.model_validate({"values": {} if settings is None else settings})
    )
