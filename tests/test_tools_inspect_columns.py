"""inspect_columns against real data: values, nulls, min/max, formats; bad names are the caller's mistake."""

from __future__ import annotations

import pytest

from actsagent.tools import InspectColumnsInput, ToolContext, ToolInputError, inspect_columns
from actsagent.tools.inspect_columns import value_format


def test_profiles_a_text_and_a_date_column(pg_db):
    out = inspect_columns(InspectColumnsInput(table="orders", columns=["status", "ordered_at"]), ToolContext(db=pg_db))
    status, date = out.profiles
    assert status.rows == 4 and status.distinct == 3 and status.null_share == 0
    assert status.top_values[0].value == "paid" and status.top_values[0].count == 2
    assert date.min == "2024-04-01" and date.max == "2024-05-11"
    assert date.formats[0].value == "9999-99-99"
    assert "orders.status (text)" in out.summary()


def test_shorthand_table_dot_column_and_nulls(pg_db_factory):
    db = pg_db_factory(["CREATE TABLE t (code TEXT)", "INSERT INTO t VALUES ('AB-12'), (NULL), ('CD-34'), (NULL)"])
    out = inspect_columns(InspectColumnsInput.model_validate({"column": "t.code"}), ToolContext(db=db))
    p = out.profiles[0]
    assert p.table == "t" and p.null_share == 0.5 and p.samples == ["AB-12", "CD-34"]
    assert p.formats[0].value == "AA-99"


def test_unknown_names(pg_db):
    with pytest.raises(ToolInputError, match="no table named"):
        inspect_columns(InspectColumnsInput(table="nope"), ToolContext(db=pg_db))
    out = inspect_columns(InspectColumnsInput(table="orders", columns=["nope"]), ToolContext(db=pg_db))
    assert "no column 'nope'" in out.profiles[0].error


def test_value_format():
    assert value_format("2024-01-05 10:00") == "9999-99-99 99:99"
    assert value_format("Electronics") == "Aaaa+"
