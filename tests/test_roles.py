"""The read-only role on the real embedded server: it reads, and it cannot write even without the guard."""

from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

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


# The hostile corpus goes through sixteen statements at a time: those that sleep (28 of them) wait out their
# statement timeout side by side (each still alone in its own session).
_AT_ONCE = 16


def _as_role(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def _login_within_the_limit(url: str) -> psycopg.Connection:
    """A session of the role while the server may still count closed ones (a backend exits a moment after its
    client leaves): a login refused for the role's connection limit is tried again, for up to ten seconds."""
    for _ in range(200):
        try:
            return _as_role(url)
        except psycopg.OperationalError as e:  # a refused login carries no SQLSTATE, only the server's words
            if "too many connections for role" not in str(e):
                raise
            time.sleep(0.05)
    return _as_role(url)


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
        for sql in [
            "UPDATE orders SET total = 0",
            "INSERT INTO customers (name) VALUES ('mallory')",
            "DELETE FROM orders",
            "TRUNCATE orders",
            "CREATE TABLE public.stolen (id int)",
            "CREATE TEMP TABLE scratch (id int)",
            "SELECT nextval('customers_id_seq')",
            "SELECT set_config('default_transaction_read_only', 'off', false)",
        ]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
    with psycopg.connect(pg_db.url) as admin:
        assert admin.execute("SELECT count(*) FROM customers").fetchone()[0] == 3
        assert admin.execute("SELECT count(*) FROM orders").fetchone()[0] == 4
        assert admin.execute("SELECT to_regclass('public.stolen')").fetchone()[0] is None
        row = admin.execute(
            "SELECT rolconnlimit, rolsuper, rolcanlogin FROM pg_roles WHERE rolname = %s", [role_name]
        ).fetchone()
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

    res = CliRunner().invoke(app, ["db", "provision-role", role_name, "--db", pg_db.url, "--timeout", "2", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["role"] == role_name and data["statement_timeout_s"] == 2 and data["schemas"] == ["public"]
    with _as_role(data["url"]) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "2s"


def test_hostile_corpus_sent_straight_through_the_role_changes_nothing(pg_db, role_name):
    """Defence in depth: every statement of the guard's hostile corpus, with the guard bypassed."""
    from hostile_corpus import load_corpus

    # room for the sessions running at once (a refused login would fail the test, not pass a statement)
    limit = 2 * _AT_ONCE
    info = provision_readonly_role(pg_db, role_name, statement_timeout_s=0.2, connection_limit=limit)
    before = _snapshot(pg_db.url, role_name)
    secrets = _server_secrets(pg_db.url)

    def send(sql: str) -> list[str] | None:
        """The outputs of ``sql``, None when it fails."""
        conn = _login_within_the_limit(info.url)  # a fresh session each time; closed without COMMIT
        try:
            cur = conn.execute(sql)
            out = []
            while True:  # every result of a multi-statement text
                if cur.description is not None:
                    out.append(repr(cur.fetchall()))
                if not cur.nextset():
                    return out
        except psycopg.Error:
            return None
        finally:
            conn.close()

    statements = [sql for _, dialect, sql in load_corpus() if dialect == "postgres"]
    with ThreadPoolExecutor(_AT_ONCE) as pool:
        results = list(pool.map(send, statements))
    succeeded = [sql for sql, out in zip(statements, results, strict=True) if out is not None]
    outputs = [o for out in results if out for o in out]
    assert _snapshot(pg_db.url, role_name) == before
    # some statements do run (SET, SHOW, EXPLAIN, LISTEN, reads of catalogs): none of them wrote data
    assert succeeded and not any(s.upper().startswith(("INSERT", "UPDATE", "DELETE", "TRUNCATE")) for s in succeeded)
    # ... and none of them showed the server's files or password hashes
    leaked = [s for s in secrets if any(s in out for out in outputs)]
    assert not leaked, leaked
    # an ordinary role may change its own defaults (the corpus tries ALTER ROLE CURRENT_USER SET ...);
    # provisioning again resets them
    provision_readonly_role(pg_db, role_name, statement_timeout_s=0.2, connection_limit=limit)
    with _as_role(info.url) as conn:
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"


def test_hostile_corpus_through_actsagent_on_the_embedded_default_changes_nothing(pg_db):
    """The embedded default path (the reader role, SET LOCALs, rollback), guard off: no statement changes
    anything or shows a server secret, and the role's own defaults stay as provisioned."""
    from hostile_corpus import load_corpus

    from actsagent.db import open_embedded
    from actsagent.db.roles import READER

    # a database's pool holds four sessions: the corpus goes through several openings of it, a thread each
    dbs = [open_embedded(pg_db.name) for _ in range(_AT_ONCE // 4)]
    mine = threading.local()
    taken = iter(range(_AT_ONCE))

    def run(sql: str):
        if not hasattr(mine, "db"):
            mine.db = dbs[next(taken) % len(dbs)]
        return mine.db.execute(sql, timeout_s=0.5, read_only=False)  # read_only=False: not writable, still read-only

    try:
        before = _snapshot(pg_db.url, READER)
        secrets = _server_secrets(pg_db.url)
        statements = [sql for _, _dialect, sql in load_corpus("postgres")]
        with ThreadPoolExecutor(_AT_ONCE) as pool:
            results = list(pool.map(run, statements))
        outputs = [repr(res.rows) for res in results if res.ok]
        assert _snapshot(pg_db.url, READER) == before
        assert not [s for s in secrets if any(s in out for out in outputs)]
        for db in dbs:
            res = db.execute("SELECT current_user, current_setting('default_transaction_read_only')")
            assert res.rows == [[READER, "on"]]
    finally:
        for db in dbs:
            db.close()


def _snapshot(url: str, role: str) -> tuple:
    with psycopg.connect(url) as admin:
        return (
            admin.execute("SELECT * FROM customers ORDER BY id").fetchall(),
            admin.execute("SELECT * FROM orders ORDER BY id").fetchall(),
            admin.execute(
                "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
                "AND n.nspname NOT LIKE 'pg_temp%%' AND n.nspname NOT LIKE 'pg_toast_temp%%' "
                "ORDER BY 1"
            ).fetchall(),
            admin.execute(
                "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles "
                "WHERE rolname = %s OR rolname = 'attacker'",
                [role],
            ).fetchall(),
            admin.execute(
                "SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
                "WHERE r.rolname = %s ORDER BY s.setdatabase",
                [role],
            ).fetchall(),
            admin.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchall(),
            admin.execute("SELECT last_value FROM customers_id_seq").fetchall(),
        )


def _server_secrets(url: str) -> list[str]:
    """Strings no read-only session may ever see: the server's paths and any password hash."""
    with psycopg.connect(url) as admin:
        out = [admin.execute(f"SHOW {p}").fetchone()[0] for p in ("data_directory", "hba_file", "config_file")]
        out += [r[0] for r in admin.execute("SELECT rolpassword FROM pg_authid WHERE rolpassword IS NOT NULL")]
    return out


def _probes(sibling_pid: int) -> list[str]:
    """What a query could use to read the server's files and secrets or to disturb other sessions."""
    return [
        "SELECT pg_read_file('postgresql.conf')",
        "SELECT pg_read_binary_file('PG_VERSION')",
        "SELECT pg_ls_dir('.')",
        "SELECT lo_import('/etc/passwd')",
        "SELECT current_setting('data_directory')",
        "SELECT current_setting('hba_file')",
        "SELECT current_setting('config_file')",
        "SELECT rolname, rolpassword FROM pg_authid",
        "SELECT * FROM pg_statistic",
        "SELECT txid_current()",  # assigns a transaction id even in a read-only transaction
        "SELECT pg_current_xact_id()",
        "SELECT pg_advisory_lock(1)",  # a session lock outlives the transaction
        "SELECT pg_try_advisory_lock(7, 7)",
        "SELECT set_config('app.tenant_id', '2', false)",
        f"SELECT pg_terminate_backend({sibling_pid})",  # a sibling pooled connection of the same role
        f"SELECT pg_cancel_backend({sibling_pid})",
        "SELECT query FROM pg_stat_activity",
        "SELECT * FROM pg_stat_get_activity(NULL)",
        "SELECT pg_stat_get_backend_activity(1)",
        "SET temp_file_limit = -1",
        "COPY customers TO '/tmp/actsagent-stolen.csv'",
    ]


def test_leak_probes_are_refused_by_the_role_alone(pg_db, role_name):
    info = provision_readonly_role(pg_db, role_name)
    with _as_role(info.url) as sibling, _as_role(info.url) as conn:
        pid = sibling.execute("SELECT pg_backend_pid()").fetchone()[0]
        for sql in _probes(pid):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
        # pg_settings does not error: it hides the row
        assert conn.execute("SELECT setting FROM pg_settings WHERE name = 'data_directory'").fetchall() == []
        assert sibling.execute("SELECT 1").fetchone() == (1,)  # still alive
    with psycopg.connect(pg_db.url) as admin:
        assert admin.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0] == 0


def test_leak_probes_are_refused_on_the_embedded_default_path(pg_db):
    """The same probes through actsagent's own path (guard off): typed permission errors, nothing else."""
    from actsagent.db import ErrorClass, open_embedded

    db = open_embedded(pg_db.name)
    try:
        with psycopg.connect(db.url, autocommit=True) as sibling:  # the reader, like a pooled sibling
            pid = sibling.execute("SELECT pg_backend_pid()").fetchone()[0]
            for sql in _probes(pid):
                res = db.execute(sql)
                assert not res.ok and res.error_class is ErrorClass.PERMISSION_DENIED, (sql, res)
            assert sibling.execute("SELECT 1").fetchone() == (1,)
    finally:
        db.close()


def test_the_embedded_default_queries_as_the_reader_and_administers_as_superuser(pg_db):
    from actsagent.db import ErrorClass, open_embedded
    from actsagent.db.roles import READER
    from actsagent.db.sandbox import sandbox

    db = open_embedded(pg_db.name)
    try:
        assert db.user == READER and not db.superuser and db.admin_url == pg_db.url
        assert db.execute("SELECT current_user, count(*) FROM customers").rows == [[READER, 3]]
        assert db.execute("SHOW temp_file_limit").rows == [["256MB"]]  # the role's default; it may not SET it
        assert db.execute("SHOW work_mem").rows == [[f"{db.limits.work_mem_mb}MB"]]  # SET LOCAL per query
        res = db.execute("DELETE FROM orders", read_only=False)
        assert res.error_class is ErrorClass.PERMISSION_DENIED
        with sandbox(db) as copy:  # the disposable copy is made and used by the administrator
            assert copy.superuser and copy.execute("DELETE FROM orders", read_only=False).ok
            assert copy.execute("SELECT count(*) FROM orders").rows == [[0]]
        assert db.execute("SELECT count(*) FROM orders").rows == [[4]]
    finally:
        db.close()


def test_reader_grants_are_refreshed_and_concurrent_provisioning_is_safe(pg_db):
    from concurrent.futures import ThreadPoolExecutor

    from actsagent.db import open_embedded
    from actsagent.db.roles import READER, reader_url

    with psycopg.connect(pg_db.url, autocommit=True) as admin:
        admin.execute("CREATE SCHEMA later")
        admin.execute("CREATE TABLE later.t AS SELECT 5 AS x")
    with ThreadPoolExecutor(4) as pool:  # four processes opening the database at once
        urls = list(pool.map(lambda _: reader_url(pg_db.url, refresh=True), range(4)))
    assert len(set(urls)) == 1 and f"user={READER}" in urls[0]
    db = open_embedded(pg_db.name)
    try:
        assert db.execute("SELECT x FROM later.t").rows == [[5]]
        with psycopg.connect(pg_db.url, autocommit=True) as admin:  # a schema created after provisioning ...
            admin.execute("CREATE SCHEMA later2")
            admin.execute("CREATE TABLE later2.t AS SELECT 6 AS x")
        assert db.execute("SELECT x FROM later2.t").error_class.value == "permission_denied"
    finally:
        db.close()
    db = open_embedded(pg_db.name)  # ... is granted the next time the database is opened
    try:
        assert db.execute("SELECT x FROM later2.t").rows == [[6]]
    finally:
        db.close()


def test_cli_db_load_refreshes_the_readers_grants(tmp_path, pg_admin_url):
    from actsagent.cli import app
    from actsagent.db import open_database
    from actsagent.db.roles import READER

    script = tmp_path / "two_schemas.sql"
    script.write_text(
        "CREATE SCHEMA sales;\nCREATE TABLE sales.deals (v int);\nINSERT INTO sales.deals VALUES (3);\n"
        "CREATE TABLE notes (t text);\nINSERT INTO notes VALUES ('x');\n"
    )
    res = CliRunner().invoke(app, ["db", "load", str(script), "--name", "two_schemas", "--replace", "--json"])
    assert res.exit_code == 0, res.output
    with psycopg.connect(pg_admin_url.replace("/postgres?", "/two_schemas?")) as admin:
        assert admin.execute("SELECT has_table_privilege(%s, 'sales.deals', 'SELECT')", [READER]).fetchone()[0]
    db = open_database("two_schemas")
    try:
        assert db.execute("SELECT current_user, (SELECT v FROM sales.deals), (SELECT t FROM notes)").rows == [
            [READER, 3, "x"]
        ]
    finally:
        db.close()


def test_cli_db_status_says_which_role_queries_run_as(pg_db):
    from actsagent.cli import app
    from actsagent.db import open_embedded
    from actsagent.db.roles import READER

    open_embedded(pg_db.name).close()
    res = CliRunner().invoke(app, ["db", "status", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["query_role"] == READER and data["query_role_superuser"] is False
    assert pg_db.name in data["query_role_databases"] and data["admin_role"] == "postgres"
    assert data["value_index"].startswith("schema actsagent of each PostgreSQL database")
    res = CliRunner().invoke(app, ["db", "status"])
    assert f"queries run as: {READER} (read-only, not a superuser)" in res.stdout
    assert "SafeQL value index: schema actsagent" in res.stdout


def test_cli_db_status_names_a_separate_value_index_without_its_password(monkeypatch):
    from actsagent.cli import app

    monkeypatch.setenv("ACTSAGENT_VALUE_INDEX_URL", "postgresql://ix:s3cret@127.0.0.1:1/index")
    res = CliRunner().invoke(app, ["db", "status", "--json"])
    assert res.exit_code == 0, res.output
    where = json.loads(res.stdout)["value_index"]
    assert "127.0.0.1:1/index" in where and "s3cret" not in where and "ACTSAGENT_VALUE_INDEX_URL" in where


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
