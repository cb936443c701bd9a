"""Values of query results as checks compare them: plain JSON, a canonical key, and a tolerant match.

Results hold Decimals, dates, arrays and JSON; a request's example holds what a person typed ("12.5",
"2024-05-01", "{1,2}", "NULL"). ``plain`` stores a result value as JSON, ``canon`` makes equal values
equal keys (two candidates agree when their canonical rows agree), and ``matches`` decides whether a
typed expected value means the value a query returned (numbers to the decimals the person wrote,
a date and a midnight timestamp alike, an array as "{1,2}" or [1, 2]).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_TRUE = {"t", "true", "yes", "y", "on", "1"}
_FALSE = {"f", "false", "no", "n", "off", "0"}


def plain(v: Any) -> Any:
    """A JSON-storable form of a result value; numbers stay numbers where exact, Decimals become exact text."""
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, Decimal):
        return _decimal_text(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date | dt.time):
        return v.isoformat()
    if isinstance(v, list | tuple):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, bytes | bytearray | memoryview):
        return "\\x" + bytes(v).hex()
    return str(v)


def _decimal_text(d: Decimal) -> str:
    if not d.is_finite():
        return str(d)
    text = format(d.normalize(), "f")
    return "0" if text in ("-0", "+0") else text


def canon(v: Any) -> Any:
    """Equal values, equal keys: 12.50, 12.5 and "12.5" alike; lists and objects recursively."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int | float | Decimal):
        d = _to_decimal(v)
        return _decimal_text(d) if d is not None else str(v)
    if isinstance(v, list | tuple):
        return [canon(x) for x in v]
    if isinstance(v, dict):
        return json.dumps({k: canon(x) for k, x in v.items()}, sort_keys=True)
    return str(v)


def row_key(row: list[Any]) -> str:
    return json.dumps([canon(v) for v in row], ensure_ascii=False, default=str)


def digests(rows: list[list[Any]]) -> tuple[str, str]:
    """(multiset digest, sequence digest) of plain rows."""
    keys = [row_key(r) for r in rows]
    bag = hashlib.sha1("\n".join(sorted(keys)).encode()).hexdigest()[:16]
    seq = hashlib.sha1("\n".join(keys).encode()).hexdigest()[:16]
    return bag, seq


def _to_decimal(v: Any) -> Decimal | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | Decimal):
        return Decimal(v)
    if isinstance(v, float):
        return Decimal(repr(v)) if math.isfinite(v) else None
    if isinstance(v, str) and _NUMBER.match(v.strip()):
        try:
            return Decimal(v.strip())
        except InvalidOperation:
            return None
    return None


def _to_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().lower()
        return True if s in _TRUE else False if s in _FALSE else None
    return None


def _to_time(v: Any) -> dt.date | dt.datetime | None:
    if isinstance(v, dt.datetime | dt.date):
        return v
    if not isinstance(v, str) or not v[:4].isdigit():
        return None
    s = v.strip().replace("Z", "+00:00")
    for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
        try:
            return parse(s)
        except ValueError:
            continue
    return None


def _same_time(a: dt.date | dt.datetime, b: dt.date | dt.datetime) -> bool:
    def norm(x: dt.date | dt.datetime) -> dt.date | dt.datetime:
        if isinstance(x, dt.datetime):
            x = x.replace(tzinfo=None)
            return x.date() if x.time() == dt.time() else x
        return x

    return norm(a) == norm(b)


def _as_list(v: Any) -> list[Any] | None:
    if isinstance(v, list | tuple):
        return list(v)
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("[") and s.endswith("]"):
            try:
                out = json.loads(s)
                return out if isinstance(out, list) else None
            except ValueError:
                return None
        if s.startswith("{") and s.endswith("}") and ":" not in s:  # a PostgreSQL array literal, not JSON
            inner = s[1:-1].strip()
            return [] if not inner else [x.strip().strip('"') for x in inner.split(",")]
    return None


def is_null(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip().upper() == "NULL")


def matches(expected: Any, got: Any) -> bool:
    """Does the value a person wrote mean the value the query returned?"""
    if is_null(expected):
        return got is None
    if got is None:
        return False
    if isinstance(expected, bool) or isinstance(got, bool):
        e, g = _to_bool(expected), _to_bool(got)
        return e is not None and e == g
    e_num, g_num = _to_decimal(expected), _to_decimal(got)
    if e_num is not None and g_num is not None:
        exponent = e_num.as_tuple().exponent
        places = max(0, -exponent) if isinstance(exponent, int) else 0
        if places == 0:
            return e_num == g_num
        return abs(e_num - g_num) <= Decimal(5) * Decimal(10) ** -(min(places, 9) + 1)
    g_list = _as_list(got) if isinstance(got, list | tuple) else None
    if g_list is not None:
        e_list = _as_list(expected)
        return e_list is not None and len(e_list) == len(g_list) and all(map(matches, e_list, g_list))
    if isinstance(got, dict):
        try:
            e_obj = json.loads(expected) if isinstance(expected, str) else expected
        except ValueError:
            return False
        return canon(e_obj) == canon(got)
    e_t, g_t = _to_time(expected), _to_time(got)
    if e_t is not None and g_t is not None:
        return _same_time(e_t, g_t)
    return str(expected).strip() == str(got).strip()


def rows_match(
    expected: list[list[Any]], got: list[list[Any]], *, ordered: bool, exact: bool
) -> tuple[bool, list, list]:
    """Match expected rows to returned rows; (ok, expected rows not found, returned rows not expected)."""

    def row_ok(e: list[Any], g: list[Any]) -> bool:
        return len(e) == len(g) and all(matches(a, b) for a, b in zip(e, g, strict=True))

    if ordered and exact:
        pairs = list(zip(expected, got))
        missing = [e for e, g in pairs if not row_ok(e, g)] + expected[len(got) :]
        extra = [g for e, g in pairs if not row_ok(e, g)] + got[len(expected) :]
        return not missing and not extra, missing, extra
    if ordered:  # the expected rows appear in this order among the returned ones
        pos, missing = 0, []
        for e in expected:
            while pos < len(got) and not row_ok(e, got[pos]):
                pos += 1
            if pos == len(got):
                missing.append(e)
            else:
                pos += 1
        return not missing, missing, []
    unused = list(range(len(got)))
    missing = []
    for e in expected:
        hit = next((i for i in unused if row_ok(e, got[i])), None)
        if hit is None:
            missing.append(e)
        else:
            unused.remove(hit)
    extra = [got[i] for i in unused] if exact else []
    return not missing and not extra, missing, extra


def sort_key(v: Any) -> tuple:
    """Order values as PostgreSQL would for the usual types (NULLs last); text compared case-insensitively."""
    if v is None:
        return (3,)
    d = _to_decimal(v) if not isinstance(v, str) or _NUMBER.match(v.strip()) else None
    if d is not None:
        return (0, d)
    t = _to_time(v)
    if t is not None:
        return (1, dt.datetime.combine(t, dt.time()) if not isinstance(t, dt.datetime) else t.replace(tzinfo=None))
    return (2, re.sub(r"[^0-9a-z]", "", str(v).casefold()), str(v))
