"""The read-only role on the real embedded server: it reads, and it cannot write even without the guard."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest
from typer.testing import CliRunner

from actsagent.db.roles import provision_readonly_role
from actsagent.errors import UserError


@pytest.fixture
def role_name(pg_db, pg_admin_url):
    """A unique role, dropped with everything granted to it before the test database goes."""
    name = f"ro_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(pg_db.url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name]).fetchone():
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [name])
            conn.execute(f'DROP OWNED BY "{name}"')
            conn.execute(f'DROP ROLE "{name}"')


def _as_role(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def test_role_reads_and_cannot_write_even_without_the_guard(pg_db, role_name):
    info = provision_readonly_role(pg_db, role_name, statement_timeout_s=5, connection_limit=3)
    assert info.created and info.role == role_name and info.tables_granted == 2
    assert f"user={role_name}" in info.url
    with _as_role(info.url) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == role_name
        assert conn.execute("SELECT count(*) FROM customers").fetchone()[0] == 3
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "5s"
        assert conn.execute("SHOW idle_in_transaction_session_timeout").fetchone()[0] == "10s"
        writes = [
            "INSERT INTO customers (name) VALUES ('mallory')",
            "UPDATE customers SET name = 'x'",
            "DELETE FROM orders",
            "TRUNCATE orders",
            "CREATE TABLE public.stolen (id int)",
            "CREATE TABLE public.stolen AS SELECT * FROM customers",
            "SELECT nextval('customers_id_seq')",
            "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d",
            # the read-only default is only a default: switch it off, the grants still refuse
            "SET default_transaction_read_only = off; INSERT INTO customers (name) VALUES ('mallory')",
            "SET default_transaction_read_only = off; DELETE FROM orders",
            "SET default_transaction_read_only = off; CREATE TABLE public.stolen (id int)",
            "SET default_transaction_read_only = off; CREATE TEMP TABLE scratch (id int)",
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            "SELECT * FROM customers WHERE set_config('app.tenant_id', '2', true) IS NOT NULL",
            "SELECT pg_advisory_lock(1)",
            "SELECT pg_try_advisory_xact_lock(1, 2)",
        ]
        for sql in writes:
            with pytest.raises(psycopg.Error) as e:
                conn.execute(sql)
            assert e.value.sqlstate in ("42501", "25006"), (sql, e.value.sqlstate, str(e.value))
        # SET is not a write; with the read-only default off, the grants alone refuse every write
        conn.execute("SET default_transaction_read_only = off")
        for sql in ["UPDATE orders SET total = 0", "INSERT INTO customers (name) VALUES ('mallory')",
                    "DELETE FROM orders", "TRUNCATE orders", "CREATE TABLE public.stolen (id int)",
                    "CREATE TEMP TABLE scratch (id int)", "SELECT nextval('customers_id_seq')",
                    "SELECT set_config('default_transaction_read_only', 'off', false)"]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
    with psycopg.connect(pg_db.url) as admin:
        assert admin.execute("SELECT count(*) FROM customers").fetchone()[0] == 3
        assert admin.execute("SELECT count(*) FROM orders").fetchone()[0] == 4
        assert admin.execute("SELECT to_regclass('public.stolen')").fetchone()[0] is None
        row = admin.execute("SELECT rolconnlimit, rolsuper, rolcanlogin FROM pg_roles WHERE rolname = %s",
                            [role_name]).fetchone()
        assert row == (3, False, True)


def test_other_login_roles_keep_what_public_loses(pg_db, role_name):
    other = role_name.replace("ro_", "app_")
    with psycopg.connect(pg_db.url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{other}" LOGIN')
    try:
        provision_readonly_role(pg_db, role_name)
        with _as_role(_with_user(pg_db.url, other)) as conn:
            assert conn.execute("SELECT set_config('app.x', '1', false)").fetchone()[0] == "1"
            assert conn.execute("SELECT pg_try_advisory_lock(42)").fetchone()[0] is True
            conn.execute("CREATE TEMP TABLE scratch (id int)")
    finally:
        with psycopg.connect(pg_db.url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [other])
            admin.execute(f'DROP OWNED BY "{other}"')
            admin.execute(f'DROP ROLE "{other}"')


def _with_user(url: str, user: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["user"] = user
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})


def test_role_statement_timeout_stops_a_slow_query(pg_db, role_name):
    info = provision_readonly_role(pg_db, role_name, statement_timeout_s=0.3)
    with _as_role(info.url) as conn, pytest.raises(psycopg.errors.QueryCanceled):
        conn.execute("SELECT pg_sleep(3)")


def test_provisioning_is_idempotent_and_covers_new_tables(pg_db, role_name):
    first = provision_readonly_role(pg_db.url, role_name)
    with psycopg.connect(pg_db.url, autocommit=True) as admin:
        admin.execute("CREATE TABLE later (id int)")
        admin.execute("INSERT INTO later VALUES (7)")
        admin.execute(f'GRANT INSERT ON customers TO "{role_name}"')  # drift the reset must undo
    with _as_role(first.url) as conn:
        assert conn.execute("SELECT id FROM later").fetchone()[0] == 7  # default privileges
    second = provision_readonly_role(pg_db.url, role_name)
    assert not second.created and second.url == first.url and second.tables_granted == 3
    with _as_role(second.url) as conn:
        conn.execute("SET default_transaction_read_only = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO customers (name) VALUES ('x')")


def test_actsagent_runs_as_the_role(pg_db, role_name):
    from actsagent.db import open_database
    from actsagent.guard import run_guarded

    info = provision_readonly_role(pg_db, role_name)
    db = open_database(info.url)
    try:
        res = run_guarded(db, "SELECT name FROM customers ORDER BY id")
        assert res.ok and [r[0] for r in res.rows] == ["Ada", "Bob", "Chloe"]
        # bypass the guard: the database still refuses
        res = db.execute("DELETE FROM orders", read_only=False)
        assert not res.ok and res.error_class.value == "permission_denied"
    finally:
        db.close()


def test_bad_input_is_a_clear_error(pg_db, sqlite_db):
    with pytest.raises(UserError, match="identifier"):
        provision_readonly_role(pg_db, "Robert'); DROP TABLE x; --")
    with pytest.raises(UserError, match="no such schema"):
        provision_readonly_role(pg_db, "ro_nobody", schemas=["nope"])
    with pytest.raises(UserError, match="PostgreSQL"):
        provision_readonly_role(sqlite_db, "ro_nobody")
    with pytest.raises(UserError, match="superuser"):
        provision_readonly_role(pg_db, "postgres", adopt=True)


def test_existing_roles_are_only_reset_when_adopted(pg_db, role_name):
    with psycopg.connect(pg_db.url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role_name}" LOGIN CREATEDB')
    with pytest.raises(UserError, match="not made by actsagent"):
        provision_readonly_role(pg_db, role_name)
    info = provision_readonly_role(pg_db, role_name, adopt=True)
    assert not info.created
    with psycopg.connect(pg_db.url) as admin:
        assert admin.execute("SELECT rolcreatedb FROM pg_roles WHERE rolname = %s", [role_name]).fetchone()[0] is False
    provision_readonly_role(pg_db, role_name)  # now it is ours: no adopt needed


def test_cli_provision_role(pg_db, role_name):
    from actsagent.cli import app

    res = CliRunner().invoke(app, ["db", "provision-role", role_name, "--db", pg_db.url, "--timeout", "2",
                                   "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["role"] == role_name and data["statement_timeout_s"] == 2 and data["schemas"] == ["public"]
    with _as_role(data["url"]) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "2s"


def test_hostile_corpus_sent_straight_through_the_role_changes_nothing(pg_db, role_name):
    """Defence in depth: every statement of the guard's hostile corpus, with the guard bypassed."""
    from hostile_corpus import load_corpus

    def snapshot() -> tuple:
        with psycopg.connect(pg_db.url) as admin:
            return (admin.execute("SELECT * FROM customers ORDER BY id").fetchall(),
                    admin.execute("SELECT * FROM orders ORDER BY id").fetchall(),
                    admin.execute("SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                                  "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
                                  "AND n.nspname NOT LIKE 'pg_temp%%' AND n.nspname NOT LIKE 'pg_toast_temp%%' "
                                  "ORDER BY 1").fetchall(),
                    admin.execute("SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
                                  "WHERE rolname = %s OR rolname = 'attacker'", [role_name]).fetchall(),
                    admin.execute("SELECT last_value FROM customers_id_seq").fetchall())

    info = provision_readonly_role(pg_db, role_name, statement_timeout_s=0.2)
    before = snapshot()
    succeeded = []
    for _, dialect, sql in load_corpus():
        if dialect != "postgres":
            continue
        conn = _as_role(info.url)  # a fresh session each time; closed without COMMIT
        try:
            conn.execute(sql)
            succeeded.append(sql)
        except psycopg.Error:
            pass
        finally:
            conn.close()
    assert snapshot() == before
    # some statements do run (SET, SHOW, EXPLAIN, LISTEN, reads of catalogs): none of them wrote data
    assert succeeded and not any(s.upper().startswith(("INSERT", "UPDATE", "DELETE", "TRUNCATE")) for s in succeeded)
    # an ordinary role may change its own defaults (the corpus tries ALTER ROLE CURRENT_USER SET ...);
    # provisioning again resets them
    provision_readonly_role(pg_db, role_name, statement_timeout_s=0.2)
    with _as_role(info.url) as conn:
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"


def test_only_the_chosen_schemas_are_readable(pg_db, role_name):
    with psycopg.connect(pg_db.url, autocommit=True) as admin:
        for schema in ("reporting", "secret"):
            admin.execute(f"CREATE SCHEMA {schema}")
            admin.execute(f"CREATE TABLE {schema}.t AS SELECT 1 AS x")
    info = provision_readonly_role(pg_db, role_name, schemas=["public", "reporting"])
    assert info.schemas == ["public", "reporting"] and info.tables_granted == 3
    with _as_role(info.url) as conn:
        assert conn.execute("SELECT x FROM reporting.t").fetchone() == (1,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT x FROM secret.t")
        conn.execute("SET default_transaction_read_only = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE reporting.stolen (id int)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TEMP TABLE scratch (id int)")
