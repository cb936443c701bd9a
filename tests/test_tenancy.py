"""Two tenants on the real embedded server: row-level security keyed by a per-caller setting.

Each tenant sees only its own rows, whatever the SQL asks for (the other tenant's rows, set_config,
SET, plain views, statistics), through the guard and with the guard off, from the Python API, the
CLI and the copilot.
"""

from __future__ import annotations

import json
import threading

import psycopg
import pytest
from typer.testing import CliRunner

from actsagent.cli import app as cli
from actsagent.db import open_embedded
from actsagent.db.roles import (
    READER,
    READER_CONNECTIONS,
    provision_readonly_role,
    reader_url,
)
from actsagent.db.tenancy import ColumnView, RlsTable, Tenancy, parse_rls, parse_view
from actsagent.errors import UserError
from actsagent.guard import run_guarded

SETUP = [
    "CREATE TABLE invoices (id serial PRIMARY KEY, tenant_id int NOT NULL, amount int, note text)",
    (
        "INSERT INTO invoices (tenant_id, amount, note) VALUES (1, 10, 'alpha secret'), (1, 20, 'alpha two'), "
        "(2, 300, 'beta secret'), (2, 400, 'beta two'), (2, 500, 'beta three')"
    ),
    "CREATE TABLE regions (id int PRIMARY KEY, name text)",  # not protected: every tenant reads it
    "INSERT INTO regions VALUES (1, 'north'), (2, 'south')",
    "CREATE VIEW all_invoices AS SELECT * FROM invoices",  # runs as its owner: would bypass the policy
    "CREATE VIEW big_invoices AS SELECT id, amount FROM all_invoices WHERE amount > 100",  # ... through another
    "CREATE MATERIALIZED VIEW invoice_totals AS SELECT tenant_id, sum(amount) AS total FROM invoices GROUP BY 1",
    "ANALYZE invoices",
]
TENANCY = Tenancy(
    setting="app.tenant_id",
    rls=[RlsTable(table="invoices", column="tenant_id")],
    views=[ColumnView(name="invoices_public", table="invoices", columns=["id", "tenant_id", "amount"])],
)
OWN = {1: [[1, 10], [1, 20]], 2: [[2, 300], [2, 400], [2, 500]]}


@pytest.fixture
def shop(pg_db_factory):
    """A database with two tenants' invoices, the reader provisioned with row-level security."""
    admin = pg_db_factory(SETUP)
    info = provision_readonly_role(admin, READER, connection_limit=READER_CONNECTIONS, tenancy=TENANCY)
    assert info.tenancy.rls_tables == ["invoices"] and info.tenancy.views == ["invoices_public"]
    assert info.tenancy.views_revoked == ["all_invoices", "big_invoices", "invoice_totals"]
    db = open_embedded(admin.name)
    yield admin, db
    db.close()


def _no_foreign_rows(res, tenant: int) -> None:
    """Whatever ran, no value of the other tenant came back."""
    if res.ok:
        other = "beta" if tenant == 1 else "alpha"
        text = json.dumps(res.rows, default=str)
        assert other not in text, res.rows
        assert not any(v in text for v in (["300", "400", "500"] if tenant == 1 else ["10,", "20]"])), res.rows


RUNNERS = {"guard": lambda db, sql: run_guarded(db, sql), "no guard": lambda db, sql: db.execute(sql)}


@pytest.mark.parametrize("path", RUNNERS)
def test_each_tenant_sees_only_its_rows_whatever_the_sql_asks(shop, path):
    _, reader = shop
    run = RUNNERS[path]
    for tenant, other in ((1, 2), (2, 1)):
        db = reader.with_settings({"app.tenant_id": tenant})
        assert run(db, "SELECT tenant_id, amount FROM invoices ORDER BY amount").rows == OWN[tenant]
        assert run(db, f"SELECT count(*) FROM invoices WHERE tenant_id = {other}").rows == [[0]]
        assert run(db, "SELECT tenant_id, amount FROM invoices_public ORDER BY amount").rows == OWN[tenant]
        assert run(db, "SELECT count(*) FROM regions").rows == [[2]]
        attempts = [
            f"SELECT tenant_id, amount FROM invoices WHERE set_config('app.tenant_id', '{other}', true) IS NOT NULL",
            f"SELECT set_config('app.tenant_id', '{other}', false)",
            f"SET app.tenant_id = {other}",
            f"SET LOCAL app.tenant_id = '{other}'",
            "RESET app.tenant_id",
            "SELECT note FROM invoices",  # the column view left this column out
            "SELECT * FROM all_invoices",
            "SELECT * FROM big_invoices",
            "SELECT * FROM invoice_totals",
            "SELECT most_common_vals::text FROM pg_stats WHERE tablename = 'invoices'",
            "SELECT query FROM pg_stat_activity",
        ]
        for sql in attempts:
            _no_foreign_rows(run(db, sql), tenant)
        for sql in attempts[5:9]:  # the hidden column, the views that would run as their owner
            assert not run(db, sql).ok, sql
        stats = run(db, attempts[9])
        assert not stats.ok or stats.rows == []  # PostgreSQL hides statistics of a table under RLS
        # after all that, the tenant is still the tenant actsagent set
        assert run(db, "SELECT DISTINCT tenant_id FROM invoices").rows == [[tenant]]
    assert run(reader, "SELECT count(*) FROM invoices").rows == [[0]]  # no setting, no rows


def test_settings_never_cross_between_callers_sharing_the_pool(shop):
    _, reader = shop
    seen: dict[int, set[int]] = {1: set(), 2: set()}

    def work(tenant: int) -> None:
        db = reader.with_settings({"app.tenant_id": tenant})
        for _ in range(15):
            res = db.execute("SELECT DISTINCT tenant_id FROM invoices")
            seen[tenant].update(r[0] for r in res.rows)

    threads = [threading.Thread(target=work, args=(t,)) for t in (1, 2, 1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {1: {1}, 2: {2}}
    assert reader.execute("SELECT current_setting('app.tenant_id', true)").rows in ([[None]], [[""]])


def test_the_tenancy_survives_a_refresh_of_the_grants(shop):
    admin, reader = shop
    reader_url(admin.url, refresh=True)  # what `db load` does: SELECT on all tables again ...
    db = reader.with_settings({"app.tenant_id": 1})
    assert db.execute("SELECT tenant_id, amount FROM invoices ORDER BY amount").rows == OWN[1]
    for sql in ("SELECT note FROM invoices", "SELECT * FROM all_invoices", "SELECT * FROM invoice_totals"):
        assert db.execute(sql).error_class.value == "permission_denied", sql  # ... but not these
    # the schema the agent reads shows what the tenant may read, and samples only its own values
    schema = db.schema()
    assert schema.table("all_invoices") is None and schema.table("invoice_totals") is None
    assert [c.name for c in schema.table("invoices").columns] == ["id", "tenant_id", "amount"]


def test_cli_provisions_the_policy_and_queries_as_a_tenant(pg_db_factory):
    admin = pg_db_factory(SETUP)
    runner = CliRunner()
    res = runner.invoke(
        cli,
        [
            "db",
            "provision-role",
            READER,
            "--db",
            admin.name,
            "--connection-limit",
            str(READER_CONNECTIONS),
            "--tenant-setting",
            "app.tenant_id",
            "--rls",
            "invoices:tenant_id",
            "--view",
            "invoices_public=invoices:id,tenant_id,amount",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    tenancy = json.loads(res.stdout)["tenancy"]
    assert tenancy["rls_tables"] == ["invoices"] and "all_invoices" in tenancy["views_revoked"]
    sql = "SELECT tenant_id, amount FROM invoices ORDER BY amount"
    res = runner.invoke(cli, ["--setting", "app.tenant_id=2", "sql", sql, "--db", admin.name, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["rows"] == OWN[2]
    res = runner.invoke(cli, ["sql", sql, "--db", admin.name, "--setting", "app.tenant_id=1", "--json"])
    assert json.loads(res.stdout)["rows"] == OWN[1]
    res = runner.invoke(cli, ["sql", sql, "--db", admin.name, "--json"])  # the global setting does not linger
    assert json.loads(res.stdout)["rows"] == []
    for bad in (["--setting", "work_mem=1"], ["--setting", "app.tenant_id"], ["--setting", "a.b;DROP=1"]):
        res = runner.invoke(cli, [*bad, "sql", "SELECT 1", "--db", admin.name])
        assert res.exit_code != 0 and isinstance(res.exception, UserError), res.output


def test_bad_tenancy_input_is_a_clear_error(pg_db_factory, sqlite_db):
    from actsagent.db.sandbox import sandbox

    admin = pg_db_factory(SETUP + ["CREATE TABLE taken (x int)"])
    for parse, text in (
        (parse_rls, "invoices"),
        (parse_rls, "inv;oices:tenant_id"),
        (parse_view, "v=invoices"),
        (parse_view, "v invoices:id"),
    ):
        with pytest.raises(UserError):
            parse(text)
    bad = [
        (Tenancy(setting="app.tenant_id", rls=[RlsTable(table="nope", column="x")]), "no table named"),
        (Tenancy(setting="app.tenant_id", rls=[RlsTable(table="invoices", column="nope")]), "no column"),
        (Tenancy(views=[ColumnView(name="taken", table="invoices", columns=["id"])]), "not an actsagent column view"),
    ]
    for tenancy, message in bad:
        with pytest.raises(UserError, match=message):
            provision_readonly_role(admin, READER, connection_limit=READER_CONNECTIONS, tenancy=tenancy)
    with pytest.raises(UserError, match="setting that holds the tenant"):
        Tenancy(rls=[RlsTable(table="invoices", column="tenant_id")])
    with pytest.raises(UserError, match="dotted custom name"):
        Tenancy(setting="work_mem")
    with pytest.raises(UserError, match="need PostgreSQL"):
        sqlite_db.with_settings({"app.tenant_id": 1})
    reader = open_embedded(admin.name)
    try:
        with pytest.raises(UserError, match="not available to a caller"), sandbox(reader.with_settings({"app.x": 1})):
            pass
        for settings in ({"app.x": None}, {"app.x": "a\x00b"}, {"plpgsql.x": 1}, {"app": 1}, ["app.x"]):
            with pytest.raises(UserError):
                reader.with_settings(settings)
    finally:
        reader.close()
    with psycopg.connect(admin.url) as conn:  # nothing half-made
        assert conn.execute("SELECT count(*) FROM pg_policy").fetchone()[0] == 0


# ----- the copilot: one token per user, each with its settings and its own conversations -----------------------

TOKENS = {
    "alice-token-0123456789": {"user": "alice", "settings": {"app.tenant_id": 1}},
    "bobby-token-0123456789": {"user": "bob", "settings": {"app.tenant_id": "2"}},
}


def _run_sql(client, token: str, sql: str) -> tuple[str, list[list]]:
    from actsagent.web.app import event_stream_lines

    h = {"Authorization": f"Bearer {token}"}
    cid = client.post("/api/conversations", json={}, headers=h).json()["id"]
    turn = client.post(f"/api/conversations/{cid}/sql", json={"sql": sql, "action": "run"}, headers=h).json()
    events = event_stream_lines(client.get(f"/api/turns/{turn['id']}/events", headers=h).text)
    results = [e for e in events if e["type"] == "result"]
    return cid, results[0]["data"]["result"]["rows"] if results else []


def test_copilot_maps_each_token_to_a_user_and_its_settings(shop, tmp_path):
    from fastapi.testclient import TestClient

    from actsagent.web.tenants import check_tokens, create_tenant_app

    _, reader = shop
    app = create_tenant_app(check_tokens(TOKENS), db=reader, store_path=tmp_path / "copilot.sqlite")
    with TestClient(app) as client:
        sql = "SELECT tenant_id, amount FROM invoices ORDER BY amount"
        alice_cid, rows = _run_sql(client, "alice-token-0123456789", sql)
        assert rows == OWN[1]
        _, rows = _run_sql(client, "alice-token-0123456789", "SELECT * FROM invoices WHERE tenant_id = 2")
        assert rows == []
        _, rows = _run_sql(client, "bobby-token-0123456789", sql)
        assert rows == OWN[2]
        bob = {"X-Actsagent-Token": "bobby-token-0123456789"}
        assert alice_cid not in [c["id"] for c in client.get("/api/conversations", headers=bob).json()]
        assert client.get(f"/api/conversations/{alice_cid}", headers=bob).status_code == 404
        assert client.get("/api/status").status_code == 401
        assert client.get("/api/conversations", params={"token": "alice-token-012345678"}).status_code == 401
        assert client.get("/").status_code == 200  # the page itself asks for the token
    assert reader.execute("SELECT 1").ok  # the shared database outlives the app that was given it
    assert sorted(p.name for p in tmp_path.glob("copilot-*.sqlite")) == ["copilot-alice.sqlite", "copilot-bob.sqlite"]


def test_bad_tokens_files_are_clear_errors(tmp_path):
    from actsagent.web.tenants import load_tokens

    cases = {
        "not json": "{",
        "a list": "[]",
        "short token": json.dumps({"short": {"user": "a"}}),
        "bad user": json.dumps({"x" * 20: {"user": "../etc"}}),
        "bad setting": json.dumps({"x" * 20: {"user": "a", "settings": {"work_mem": "1"}}}),
        "two settings": json.dumps(
            {"x" * 20: {"user": "a", "settings": {"app.t": 1}}, "y" * 20: {"user": "a", "settings": {"app.t": 2}}}
        ),
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        with pytest.raises(UserError, match="tokens"):
            load_tokens(path)
    with pytest.raises(UserError, match="cannot read"):
        load_tokens(tmp_path / "missing.json")
    res = CliRunner().invoke(cli, ["serve", "--token", "t" * 20, "--tokens", str(tmp_path / "a list.json")])
    assert res.exit_code != 0 and "not both" in str(res.exception)
