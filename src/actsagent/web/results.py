"""Rows for the page: JSON-safe values, a chart when the rows are a series or categories, and
a short answer in words (deterministic; the LLM's wording is optional, see ``answer.py``)."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, Literal

from actsagent.db.results import QueryResult
from actsagent.web.limits import MAX_CELL_CHARS, MAX_PREVIEW_BYTES, MAX_PREVIEW_ROWS, bounded, cut
from actsagent.web.models import ChartSpec, ResultView

_MAX_SAFE_INT = 2**53 - 1
_DATE_RE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T]\d{2}:\d{2}(:\d{2})?.*)?$")
_TIME_WORDS = ("date", "day", "month", "year", "week", "quarter", "hour", "time", "ts", "period")
_NUM_TYPES = ("int", "numeric", "decimal", "real", "double", "float", "money", "serial")


def jsonable(v: Any) -> Any:
    """A value the browser can show unchanged (big integers as strings, dates as ISO text)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if abs(v) <= _MAX_SAFE_INT else str(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, Decimal):
        if not v.is_finite():
            return str(v)
        if v == v.to_integral_value() and abs(v) <= _MAX_SAFE_INT:
            return int(v)
        return float(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(v))} bytes>"
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return str(v)


def view_of(res: QueryResult, *, max_rows: int = MAX_PREVIEW_ROWS) -> ResultView:
    """The page's view of a result: from the database, or from the agent's run (a JSON dump read back, whose
    NUMERIC values are strings: columns the database types as numbers are shown as numbers again)."""
    numeric = [any(k in c.type.lower() for k in _NUM_TYPES) for c in res.columns]
    rows = ([_number(v) if i < len(numeric) and numeric[i] else jsonable(v) for i, v in enumerate(r)] for r in res.rows)
    return preview(
        [c.name for c in res.columns],
        [c.type for c in res.columns],
        rows,
        row_count=res.row_count,
        truncated=res.truncated,
        elapsed_ms=round(res.elapsed_ms, 1),
        max_rows=max_rows,
    )


def preview(
    columns: list[str],
    types: list[str],
    rows: Iterable[list[Any]],
    *,
    row_count: int,
    truncated: bool,
    elapsed_ms: float | None,
    max_rows: int = MAX_PREVIEW_ROWS,
    max_bytes: int = MAX_PREVIEW_BYTES,
) -> ResultView:
    """The rows a turn keeps and sends: at most ``max_rows`` rows and ``max_bytes`` of JSON, each value cut to
    ``MAX_CELL_CHARS``. ``row_count`` stays the full count; ``truncated`` says the database stopped at its row
    cap (``more_rows``) or the preview left rows out."""
    kept: list[list[Any]] = []
    size = cells_cut = 0
    full = True
    for r in rows:
        if len(kept) >= max_rows:
            full = False
            break
        row = [_cell(v) for v in r]
        cells_cut += sum(1 for a, b in zip(r, row, strict=True) if a is not b)
        size += len(json.dumps(row, ensure_ascii=False).encode())
        if size > max_bytes:
            full = False
            break
        kept.append(row)
    row_count = max(row_count, len(kept))
    notes = ["the database stopped at its row cap"] if truncated else []
    if not full or len(kept) < row_count:
        cap = f"{max_bytes // 1024} KB" if len(kept) < max_rows else f"{max_rows} rows"
        notes.append(f"showing {len(kept):,} of {row_count:,} rows, the preview keeps at most {cap}")
    if cells_cut:
        notes.append(f"{cells_cut:,} long value(s) cut to {MAX_CELL_CHARS:,} characters")
    return ResultView(
        columns=columns,
        types=types,
        rows=kept,
        row_count=row_count,
        truncated=truncated or len(kept) < row_count,
        elapsed_ms=elapsed_ms,
        more_rows=truncated,
        note="; ".join(notes) or None,
    )


def _cell(v: Any) -> Any:
    """A JSON-safe value cut to ``MAX_CELL_CHARS`` (text, or arrays and JSON documents as their JSON text)."""
    if isinstance(v, str):
        return cut(v, MAX_CELL_CHARS)
    if isinstance(v, (list, dict)):
        small = bounded(v, max_text=MAX_CELL_CHARS, budget=MAX_CELL_CHARS, max_items=100, max_depth=4)
        if small != v:
            return cut(json.dumps(small, ensure_ascii=False), MAX_CELL_CHARS)
    return v


def _number(v: Any) -> Any:
    """A number as the page shows it (JSON dumps carry NUMERIC values as strings)."""
    if isinstance(v, str):
        try:
            return jsonable(Decimal(v))
        except ArithmeticError:
            return v
    return jsonable(v)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _numeric_col(view: ResultView, i: int) -> bool:
    vals = [r[i] for r in view.rows if r[i] is not None]
    if not vals:
        return False
    t = view.types[i].lower() if i < len(view.types) else ""
    if t and not any(k in t for k in _NUM_TYPES):
        return False
    return all(_is_num(v) for v in vals)


def _id_like(name: str) -> bool:
    low = name.lower()
    return low == "id" or low.endswith("_id")


def _time_like(view: ResultView, i: int) -> bool:
    t = view.types[i].lower() if i < len(view.types) else ""
    if "date" in t or "time" in t:
        return True
    vals = [r[i] for r in view.rows if r[i] is not None]
    if vals and all(isinstance(v, str) and _DATE_RE.match(v) for v in vals):
        return True
    name = view.columns[i].lower()
    return bool(any(w == name or name.startswith(w + "_") or name.endswith("_" + w) for w in _TIME_WORDS))


def chart_for(view: ResultView) -> ChartSpec | None:
    """Bar chart for categories, line chart for a time series; ``None`` when a chart would mislead."""
    n = len(view.rows)
    if n < 2 or n > 200 or len(view.columns) < 2:
        return None
    numeric = [i for i in range(len(view.columns)) if _numeric_col(view, i)]
    labels = [i for i in range(len(view.columns)) if i not in numeric]
    x: int | None = None
    if labels:
        x = labels[0]
    elif numeric and _time_like(view, numeric[0]):
        x = numeric[0]
    if x is None:
        return None
    ys = [i for i in numeric if i != x and not _id_like(view.columns[i])][:3]
    if not ys:
        return None
    keys = [str(r[x]) for r in view.rows]
    if len(set(keys)) != len(keys):
        return None  # repeated labels: the rows are not one series, a chart would mislead
    kind: Literal["bar", "line"] = "line" if _time_like(view, x) else "bar"
    names = ", ".join(view.columns[i] for i in ys)
    return ChartSpec(kind=kind, x=x, y=ys, title=f"{names} by {view.columns[x]}")


def _fmt(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:,.2f}".rstrip("0").rstrip(".") if abs(v) < 1e15 else f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else str(v)
    return text if len(text) <= 60 else text[:59] + "…"


def summarize(view: ResultView, chart: ChartSpec | None = None) -> str:
    """A short answer in words, from the rows alone: what a person checks first."""
    n = view.row_count
    more = " (cut at the row cap; there are more)" if view.more_rows else ""
    if n == 0:
        return (
            "No rows. An empty result often means a filter value does not match the stored data: "
            "check the WHERE clause against the values in the table."
        )
    if not view.rows:
        return f"{n:,} row(s){more}, too wide to preview."
    if n == 1 and len(view.columns) == 1:
        return f"{view.columns[0]}: {_fmt(view.rows[0][0])}."
    if n == 1:
        pairs = ", ".join(f"{c} = {_fmt(v)}" for c, v in list(zip(view.columns, view.rows[0], strict=False))[:6])
        return f"1 row: {pairs}."
    head = f"{n:,} rows{more}."
    if chart is not None:
        y = chart.y[0]
        pts = [(r[chart.x], r[y]) for r in view.rows if _is_num(r[y])]
        if pts:
            ycol = view.columns[y]
            if chart.kind == "line":
                lo = min(pts, key=lambda p: p[1])
                hi = max(pts, key=lambda p: p[1])
                return (
                    f"{head} {ycol} from {_fmt(pts[0][0])} to {_fmt(pts[-1][0])}: highest {_fmt(hi[1])} "
                    f"({_fmt(hi[0])}), lowest {_fmt(lo[1])} ({_fmt(lo[0])})."
                )
            hi = max(pts, key=lambda p: p[1])
            lo = min(pts, key=lambda p: p[1])
            return f"{head} Highest {ycol}: {_fmt(hi[0])} ({_fmt(hi[1])}); lowest: {_fmt(lo[0])} ({_fmt(lo[1])})."
    first = ", ".join(f"{c} = {_fmt(v)}" for c, v in list(zip(view.columns, view.rows[0], strict=False))[:4])
    return f"{head} First: {first}."
