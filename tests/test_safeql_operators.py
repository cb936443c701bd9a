"""Each refinement operator on the real embedded PostgreSQL and on SQLite."""

from __future__ import annotations

import pytest
from engines import open_engine, sorted_rows

from actsagent.safeql import refine

SETUP = [
    "CREATE TABLE country (country_id INTEGER PRIMARY KEY, country_name TEXT NOT NULL, region TEXT)",
    "CREATE TABLE country_info (info_id INTEGER PRIMARY KEY, population BIGINT, gdp NUMERIC(15,2), "
    "country_id INTEGER REFERENCES country(country_id), founded TEXT)",
    "CREATE TABLE person (person_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, age INTEGER, "
    "country_id INTEGER REFERENCES country(country_id))",
    "INSERT INTO country VALUES (1, 'South Korea', 'Asia'), (2, 'United States', 'North America'), "
    "(3, 'Germany', 'Europe')",
    "INSERT INTO country_info VALUES (10, 51780000, 1800000.00, 1, '1948-08-15'), "
    "(11, 331000000, 21400000.00, 2, '1776-07-04'), (12, 83200000, 4200000.00, 3, '1949-05-23')",
    "INSERT INTO person VALUES (1, 'Alice', 'Kim', 28, 1), (2, 'Bob', 'Lee', 35, 2), (3, 'Charlie', 'Park', 42, 3)",
]


@pytest.fixture(params=["postgres", "sqlite"])
def db(request, tmp_path):
    return open_engine(request, tmp_path, SETUP)


def _refined(db, sql, operator):
    res = refine(db, sql)
    assert res.status == "refined", (res.why, res.error_message)
    assert db.execute(res.refined_sql).ok
    assert operator in [e.operator for e in res.edits], res.edits
    return res


def test_relation(db):
    res = _refined(db, "SELECT country_name FROM countries", "relation")
    assert sorted_rows(db, res.refined_sql) == [("Germany",), ("South Korea",), ("United States",)]


def test_join_adds_table_on_foreign_key(db):
    res = _refined(db, "SELECT p.first_name, population FROM person p WHERE p.age > 30", "join")
    assert " JOIN " in res.refined_sql.upper() and " ON " in res.refined_sql.upper()
    assert sorted_rows(db, res.refined_sql) == [("Bob", "331000000"), ("Charlie", "83200000")]


def test_attribute_fixes_name_and_qualifier(db):
    res = _refined(db, "SELECT p.firstname FROM person p WHERE p.age < 30", "attribute")
    assert sorted_rows(db, res.refined_sql) == [("Alice",)]
    res = _refined(db, "SELECT x.first_name FROM person p WHERE p.age < 30", "attribute")
    assert sorted_rows(db, res.refined_sql) == [("Alice",)]


def test_value_nearest_stored_value(db):
    res = _refined(db, "SELECT region FROM country WHERE country_name = 'south korea'", "value")
    assert sorted_rows(db, res.refined_sql) == [("Asia",)]
    assert res.error_class == "empty_result"
    res = _refined(db, "SELECT country_name FROM country WHERE region LIKE 'Europa%'", "value")
    assert sorted_rows(db, res.refined_sql) == [("Germany",)]


def test_ambiguous_column_is_qualified(db):
    res = _refined(
        db,
        "SELECT country_name, population FROM country JOIN country_info "
        "ON country.country_id = country_info.country_id WHERE country_id = 2",
        "ambiguous",
    )
    assert sorted_rows(db, res.refined_sql) == [("United States", "331000000")]


def test_function_dialect_equivalent(db):
    if db.dialect == "postgres":
        sql = "SELECT count(*) FROM country_info WHERE strftime('%Y', founded) = '1948'"
    else:
        sql = "SELECT count(*) FROM country_info WHERE YEAR(founded) = 1948"
    res = _refined(db, sql, "function")
    assert sorted_rows(db, res.refined_sql) == [("1",)]


def test_function_argument_swapped_for_numeric_column(db):
    if db.dialect == "postgres":
        res = _refined(db, "SELECT sum(c.country_name) FROM country c", "attribute")
        assert sorted_rows(db, res.refined_sql) == [("6",)]
    else:  # SQLite sums text as 0; an unknown function name is what fails there
        res = _refined(db, "SELECT summ(age) FROM person", "function")
        assert sorted_rows(db, res.refined_sql)[0][0] in ("105", "105.0")


def test_type_mismatch_cast(db):
    if db.dialect == "postgres":
        res = _refined(db, "SELECT first_name FROM person WHERE age::text >= 40", "mismatch")
    else:  # the text expression never equals a number in SQLite: an empty result, not an error
        res = _refined(db, "SELECT population FROM country_info WHERE substr(founded, 1, 4) = 1948", "mismatch")
        assert sorted_rows(db, res.refined_sql) == [("51780000",)]
        return
    assert sorted_rows(db, res.refined_sql) == [("Charlie",)]


def test_aggregate_condition_moves_to_having(db):
    res = _refined(db, "SELECT region, count(*) FROM country WHERE count(*) >= 1 GROUP BY region", "aggregate")
    assert "HAVING" in res.refined_sql.upper()
    assert len(sorted_rows(db, res.refined_sql)) == 3


def test_aggregate_condition_without_group_by_gets_one(db):
    res = _refined(db, "SELECT country_id FROM person WHERE count(person_id) >= 1", "aggregate")
    assert "GROUP BY" in res.refined_sql.upper()
    assert sorted_rows(db, res.refined_sql) == [("1",), ("2",), ("3",)]


def test_ungrouped_column_on_postgres(db):
    sql = "SELECT region, country_name, count(*) FROM country GROUP BY region"
    if db.dialect == "sqlite":  # SQLite accepts a bare column next to an aggregate: nothing to refine
        assert refine(db, sql).status == "already_ok"
        return
    res = _refined(db, sql, "aggregate")
    assert len(sorted_rows(db, res.refined_sql)) == 3


def test_nested_aggregate_is_unnested(db):
    res = _refined(
        db,
        "SELECT region FROM country GROUP BY region HAVING count(*) = "
        "(SELECT max(count(*)) FROM country GROUP BY region)",
        "aggregate",
    )
    assert len(sorted_rows(db, res.refined_sql)) == 3


def test_syntax_salvage_closes_a_cut_off_query(db):
    res = _refined(db, "SELECT first_name FROM person WHERE age > 30 AND (last_name = 'Park' OR last_na", "syntax")
    assert sorted_rows(db, res.refined_sql) == [("Charlie",)]


def test_syntax_rewrites_what_the_dialect_lacks(db):
    if db.dialect == "postgres":  # PostgreSQL has ANY; a MySQL-style backtick is what it refuses
        res = _refined(db, "SELECT `first_name` FROM person WHERE age > 40", "syntax")
    else:
        res = _refined(
            db, "SELECT first_name FROM person WHERE age > ALL (SELECT age FROM person WHERE age < 40)", "syntax"
        )
    assert sorted_rows(db, res.refined_sql) == [("Charlie",)]


def test_syntax_salvage_keeps_the_first_select(db):
    res = _refined(db, "```sql\nSELECT first_name FROM person WHERE age > 40;\n```\nThis lists people.", "syntax")
    assert sorted_rows(db, res.refined_sql) == [("Charlie",)]


def test_nested_subquery_and_cte(db):
    res = _refined(
        db,
        "WITH big AS (SELECT country_id FROM country_info WHERE populaton > 100000000) "
        "SELECT country_name FROM country WHERE country_id IN (SELECT country_id FROM big)",
        "attribute",
    )
    assert sorted_rows(db, res.refined_sql) == [("United States",)]
    res = _refined(
        db,
        "SELECT first_name FROM person WHERE age > (SELECT avg(agee) FROM person) "
        "UNION SELECT country_name FROM country WHERE region = 'Asia'",
        "attribute",
    )
    assert sorted_rows(db, res.refined_sql) == [("Charlie",), ("South Korea",)]


def test_ok_and_non_select_are_left_alone(db):
    res = refine(db, "SELECT count(*) FROM person")
    assert res.status == "already_ok" and res.rows_preview == [[3]]
    res = refine(db, "DELETE FROM person")
    assert res.status == "gave_up" and "SELECT" in res.why
    assert db.execute("SELECT count(*) FROM person").rows == [[3]]


def test_gave_up_never_claims_refined(db):
    res = refine(db, "SELECT zzzz(qqqq) FROM nothing_like_this_xyz")
    assert res.status in ("gave_up", "refined")
    if res.status == "refined":
        assert db.execute(res.refined_sql).ok
