"""inspect_columns: what the values of table.column really look like, so predicates match data.

Sample and most frequent values, null share, distinct count, min/max and value *formats*
(``2024-01-05`` -> ``9999-99-99``), read with fixed query templates sent through the guard.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

import sqlglot
from pydantic import BaseModel, Field, model_validator

from actsagent.db import QueryResult
from actsagent.tools._context import ToolContext, ToolInputError
from actsagent.tools._results import ToolOutput


class InspectColumnsInput(BaseModel):
    table: str
    columns: list[str] = Field(default_factory=list)  # empty: every column of the table
    sample_size: int = Field(default=8, gt=0, le=100)
    top_k: int = Field(default=10, gt=0, le=100)

    @model_validator(mode="before")
    @classmethod
    def _accept_shorthands(cls, data: Any) -> Any:
        """Planners write {"column": "t.c"} or {"table": "t", "column": "c"}; accept both."""
        if isinstance(data, dict):
            data = dict(data)
            col = data.pop("column", None)
            if col is not None:
                data.setdefault("columns", [])
                data["columns"] = list(data["columns"]) + ([col] if isinstance(col, str) else list(col))
            cols = data.get("columns") or []
            if not data.get("table") and cols and "." in cols[0]:
                data["table"] = cols[0].rsplit(".", 1)[0]
            data["columns"] = [c.rsplit(".", 1)[-1] for c in cols]
        return data


class ValueCount(BaseModel):
    value: str | None
    count: int


class ColumnProfile(BaseModel):
    table: str
    column: str
    type: str = ""
    rows: int = 0
    null_share: float = 0.0
    distinct: int = 0
    min: str | None = None
    max: str | None = None
    top_values: list[ValueCount] = Field(default_factory=list)
    samples: list[str] = Field(default_factory=list)
    formats: list[ValueCount] = Field(default_factory=list)
    error: str | None = None

    def describe(self) -> str:
        if self.error:
            return f"{self.table}.{self.column}: ERROR {self.error}"
        top = ", ".join(f"{v.value!r}x{v.count}" for v in self.top_values[:6])
        fmts = ", ".join(f"{f.value}x{f.count}" for f in self.formats[:3])
        return (
            f"{self.table}.{self.column} ({self.type}): {self.rows} rows, {self.null_share:.0%} null, "
            f"{self.distinct} distinct, min={self.min!r} max={self.max!r}; top: {top}; formats: {fmts}"
        )


class InspectColumnsOutput(ToolOutput):
    tool: Literal["inspect_columns"] = "inspect_columns"
    profiles: list[ColumnProfile]

    def summary(self) -> str:
        return "\n".join(p.describe() for p in self.profiles)


def inspect_columns(inp: InspectColumnsInput, ctx: ToolContext) -> InspectColumnsOutput:
    schema = ctx.db.schema()
    table = schema.table(inp.table)
    if table is None:
        raise ToolInputError(f"no table named {inp.table!r}; tables: {', '.join(t.name for t in schema.tables)}")
    names = inp.columns or [c.name for c in table.columns]
    profiles = []
    for name in names:
        col = table.column(name)
        if col is None:
            profiles.append(
                ColumnProfile(
                    table=table.name,
                    column=name,
                    error=f"no column {name!r} in {table.name}; columns: {', '.join(c.name for c in table.columns)}",
                )
            )
            continue
        profiles.append(_profile(ctx, table.qualified, col.name, col.type, inp))
    return InspectColumnsOutput(profiles=profiles)


def _q(name: str, dialect: str) -> str:
    parts = name.split(".")
    return ".".join(sqlglot.exp.to_identifier(p, quoted=True).sql(dialect=dialect) for p in parts)


def _profile(ctx: ToolContext, table: str, column: str, ctype: str, inp: InspectColumnsInput) -> ColumnProfile:
    from actsagent.guard import run_guarded

    d = ctx.db.dialect
    t, c = _q(table, d), _q(column, d)
    as_text = f"CAST({c} AS TEXT)"
    prof = ColumnProfile(table=table, column=column, type=ctype)

    def one(sql: str) -> QueryResult | None:
        res = run_guarded(ctx.db, sql, policy=ctx.active_policy())
        if not res.ok:
            prof.error = prof.error or res.describe()
            return None
        assert isinstance(res, QueryResult)
        return res

    stats = one(f"SELECT COUNT(*), COUNT({c}), COUNT(DISTINCT {as_text}) FROM {t}")
    if stats is None:
        return prof
    n, non_null, distinct = (int(x or 0) for x in stats.rows[0])
    prof.rows, prof.distinct = n, distinct
    prof.null_share = (n - non_null) / n if n else 0.0
    # min/max only where the type orders meaningfully; an error here is not the column's fault
    res = run_guarded(
        ctx.db, f"SELECT CAST(MIN({c}) AS TEXT), CAST(MAX({c}) AS TEXT) FROM {t}", policy=ctx.active_policy()
    )
    if res.ok and isinstance(res, QueryResult) and res.rows:
        prof.min, prof.max = res.rows[0][0], res.rows[0][1]
    top = one(f"SELECT {as_text} AS v, COUNT(*) AS n FROM {t} GROUP BY {as_text} ORDER BY n DESC, v LIMIT {inp.top_k}")
    if top is not None:
        prof.top_values = [ValueCount(value=r[0], count=int(r[1])) for r in top.rows]
    sample = one(f"SELECT {as_text} FROM {t} WHERE {c} IS NOT NULL LIMIT {inp.sample_size}")
    if sample is not None:
        prof.samples = [r[0] for r in sample.rows]
    values = prof.samples + [v.value for v in prof.top_values if v.value is not None]
    prof.formats = [ValueCount(value=f, count=k) for f, k in Counter(value_format(v) for v in values).most_common(5)]
    return prof


def value_format(value: str) -> str:
    """The shape of a value: digits -> 9, letters -> A/a, runs of 4+ letters collapsed; punctuation kept."""
    s = re.sub(r"[0-9]", "9", value[:40])
    s = re.sub(r"[A-Z]", "A", s)
    s = re.sub(r"[a-z]", "a", s)
    s = re.sub(r"([Aa])\1{3,}", r"\1\1\1+", s)
    return s + ("..." if len(value) > 40 else "")
