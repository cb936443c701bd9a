"""Row-level security keyed by a per-caller setting, and column-restricted views, for a read-only role.

With ``setting='app.tenant_id'`` and ``orders:tenant_id``, the role sees only the orders whose
tenant_id equals the setting actsagent SETs LOCAL for the caller (no setting: no rows). The
policies are per role: a restrictive ``actsagent_tenant_<role>`` (the filter) and a permissive
``actsagent_reader_<role>``. When actsagent is the one enabling RLS on a table it also FORCEs it and
adds a permissive ``actsagent_others`` for every other role, so they keep seeing what they saw.

Two ways around a policy are closed here. A plain view runs with its owner's rights (a superuser
bypasses RLS), so the role loses SELECT on every view or materialized view built on a protected
table unless the view is ``security_invoker``. A column view is created ``WITH (security_invoker =
true)``; the role gets SELECT on the view and on those columns of the table, not on the table.
Both are re-derived from the database on every provisioning, so refreshing the grants after a
load (which re-grants SELECT on all tables) keeps them.
"""

from __future__ import annotations

import re

import psycopg
from psycopg import sql as pgsql
from pydantic import BaseModel, model_validator

from actsagent.db.admin import first_row, scalar
from actsagent.db.settings import check_name
from actsagent.errors import UserError

VIEW_MARKER = "actsagent column view"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,62}$")


class RlsTable(BaseModel, frozen=True):
    table: str  # name or schema.name
    column: str


class ColumnView(BaseModel, frozen=True):
    name: str  # the view, created in the table's schema
    table: str
    columns: list[str]


class Tenancy(BaseModel, frozen=True):
    setting: str | None = None  # e.g. app.tenant_id
    rls: list[RlsTable] = []
    views: list[ColumnView] = []

    @model_validator(mode="after")
    def _check(self) -> Tenancy:
        if self.rls and not self.setting:
            raise UserError(
                "row-level security needs the setting that holds the tenant (--tenant-setting app.tenant_id)"
            )
        if self.setting:
            object.__setattr__(self, "setting", check_name(self.setting))
        return self


class TenancyReport(BaseModel, frozen=True):
    setting: str | None = None
    rls_tables: list[str] = []
    views: list[str] = []
    views_revoked: list[str] = []  # plain views on protected tables, which would bypass the policies


def parse_rls(text: str) -> RlsTable:
    """``orders:tenant_id`` or ``sales.orders:tenant_id``."""
    table, sep, column = text.rpartition(":")
    if not sep or not _names_ok(table.split(".")) or not _IDENT.match(column):
        raise UserError(f"--rls {text!r}: write TABLE:COLUMN, e.g. orders:tenant_id")
    return RlsTable(table=table, column=column)


def parse_view(text: str) -> ColumnView:
    """``orders_public=orders:id,status,total``."""
    name, sep, rest = text.partition("=")
    table, sep2, cols = rest.rpartition(":")
    columns = [c.strip() for c in cols.split(",") if c.strip()]
    if not (sep and sep2) or not _IDENT.match(name) or not _names_ok(table.split(".")) or not _names_ok(columns):
        raise UserError(f"--view {text!r}: write VIEW=TABLE:COL1,COL2, e.g. orders_public=orders:id,status")
    return ColumnView(name=name, table=table, columns=columns)


def _names_ok(parts: list[str]) -> bool:
    return bool(parts) and all(_IDENT.match(p) for p in parts)


def apply_tenancy(conn: psycopg.Connection, role: str, tenancy: Tenancy | None) -> TenancyReport:
    """Create what ``tenancy`` asks for, then enforce what the database holds for ``role`` (in the caller's
    transaction, after the table grants)."""
    ident = pgsql.Identifier(role)
    tenancy = tenancy or Tenancy()
    for spec in tenancy.rls:
        _protect(conn, role, spec, tenancy.setting or "")
    for view in tenancy.views:
        _create_view(conn, role, view)
    # enforce, from the database: column views, then plain views over protected tables
    views = []
    for view_oid, view_name, _table_oid, table_name in conn.execute(
        "SELECT v.oid, v.oid::regclass::text, t.oid, t.oid::regclass::text FROM pg_class v "
        "JOIN pg_rewrite r ON r.ev_class = v.oid JOIN pg_depend d ON d.objid = r.oid "
        "AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass "
        "JOIN pg_class t ON t.oid = d.refobjid AND t.oid <> v.oid AND t.relkind IN ('r', 'p') "
        "WHERE v.relkind = 'v' AND obj_description(v.oid, 'pg_class') = %s GROUP BY 1, 2, 3, 4",
        [f"{VIEW_MARKER} for {role}"],
    ).fetchall():
        cols = [
            r[0]
            for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0 "
                "AND NOT attisdropped ORDER BY attnum",
                [view_oid],
            )
        ]
        table = pgsql.SQL(table_name)  # regclass text: quoted by the server where needed
        conn.execute(pgsql.SQL("REVOKE SELECT ON {} FROM {}").format(table, ident))
        conn.execute(
            pgsql.SQL("GRANT SELECT ({}) ON {} TO {}").format(
                pgsql.SQL(", ").join(map(pgsql.Identifier, cols)), table, ident
            )
        )
        conn.execute(pgsql.SQL("GRANT SELECT ON {} TO {}").format(pgsql.SQL(view_name), ident))
        views.append(view_name)
    protected = conn.execute(
        "SELECT DISTINCT polrelid, polrelid::regclass::text FROM pg_policy WHERE polname = %s",
        [_policy("tenant", role)],
    ).fetchall()
    revoked = []
    if protected:
        for (name,) in conn.execute(_BYPASSING_VIEWS, [[oid for oid, _ in protected]]).fetchall():
            conn.execute(pgsql.SQL("REVOKE ALL ON {} FROM {}").format(pgsql.SQL(name), ident))
            revoked.append(name)
    return TenancyReport(
        setting=tenancy.setting,
        rls_tables=sorted(n for _, n in protected),
        views=sorted(views),
        views_revoked=sorted(revoked),
    )


# views and materialized views that read a protected table, directly or through other views, and run
# with their owner's rights (not security_invoker): the owner's rights would skip the role's policy
_BYPASSING_VIEWS = """
WITH RECURSIVE deps(oid) AS (
    SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
    WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
      AND d.refobjid = ANY(%s) AND r.ev_class <> d.refobjid
    UNION
    SELECT r.ev_class FROM deps JOIN pg_depend d ON d.refobjid = deps.oid JOIN pg_rewrite r ON r.oid = d.objid
    WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND r.ev_class <> d.refobjid
)
SELECT c.oid::regclass::text FROM deps JOIN pg_class c ON c.oid = deps.oid
WHERE c.relkind = 'm' OR NOT EXISTS (
    SELECT 1 FROM unnest(coalesce(c.reloptions, '{}')) o
    WHERE lower(o) IN ('security_invoker=true', 'security_invoker=on', 'security_invoker=1', 'security_invoker=yes'))
ORDER BY 1
"""


def _policy(kind: str, role: str) -> str:
    return f"actsagent_{kind}_{role}"[:63]


def _table(conn: psycopg.Connection, name: str) -> tuple[int, str]:
    row = conn.execute(
        "SELECT c.oid, c.oid::regclass::text, c.relkind FROM pg_class c WHERE c.oid = to_regclass(%s)", [name]
    ).fetchone()
    if row is None or row[2] not in ("r", "p"):
        raise UserError(f"no table named {name!r} in {conn.info.dbname}")
    return row[0], row[1]


def _column_type(conn: psycopg.Connection, table_oid: int, table: str, column: str) -> str:
    row = conn.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s "
        "AND attname = %s AND attnum > 0 AND NOT attisdropped",
        [table_oid, column],
    ).fetchone()
    if row is None:
        raise UserError(f"table {table} has no column {column!r}")
    return row[0]


def _protect(conn: psycopg.Connection, role: str, spec: RlsTable, setting: str) -> None:
    oid, table = _table(conn, spec.table)
    col_type = _column_type(conn, oid, table, spec.column)
    enabled, ours = first_row(
        conn,
        "SELECT relrowsecurity, EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = %s AND polname = 'actsagent_others') "
        "FROM pg_class WHERE oid = %s",
        [oid, oid],
    )
    t, ident = pgsql.SQL(table), pgsql.Identifier(role)
    tenant, reader = pgsql.Identifier(_policy("tenant", role)), pgsql.Identifier(_policy("reader", role))
    conn.execute(pgsql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(t))
    if not enabled or ours:  # actsagent turned RLS on: everyone else keeps seeing (and writing) what they did
        conn.execute(pgsql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(t))
        conn.execute(pgsql.SQL("DROP POLICY IF EXISTS actsagent_others ON {}").format(t))
        conn.execute(
            pgsql.SQL(
                "CREATE POLICY actsagent_others ON {} AS PERMISSIVE FOR ALL TO PUBLIC "
                "USING (current_user <> {}) WITH CHECK (current_user <> {})"
            ).format(t, pgsql.Literal(role), pgsql.Literal(role))
        )
    for policy in (tenant, reader):
        conn.execute(pgsql.SQL("DROP POLICY IF EXISTS {} ON {}").format(policy, t))
    conn.execute(
        pgsql.SQL("CREATE POLICY {} ON {} AS PERMISSIVE FOR SELECT TO {} USING (true)").format(reader, t, ident)
    )
    # col_type is format_type() text from the catalog; the setting name is a checked literal
    conn.execute(
        pgsql.SQL(
            "CREATE POLICY {} ON {} AS RESTRICTIVE FOR SELECT TO {} "
            "USING ({} = NULLIF(current_setting({}, true), '')::" + col_type + ")"
        ).format(tenant, t, ident, pgsql.Identifier(spec.column), pgsql.Literal(setting))
    )


def _create_view(conn: psycopg.Connection, role: str, view: ColumnView) -> None:
    oid, table = _table(conn, view.table)
    for c in view.columns:
        _column_type(conn, oid, table, c)
    schema = scalar(conn, "SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = %s", [oid])
    qualified = pgsql.SQL("{}.{}").format(pgsql.SQL(schema), pgsql.Identifier(view.name))
    marker = f"{VIEW_MARKER} for {role}"
    existing = conn.execute(
        "SELECT c.relkind, obj_description(c.oid, 'pg_class') FROM pg_class c "
        "WHERE c.relname = %s AND c.relnamespace = %s::regnamespace",
        [view.name, schema],
    ).fetchone()
    if existing is not None:
        if existing[0] != "v" or existing[1] != marker:
            raise UserError(
                f"{schema}.{view.name} exists and is not an actsagent column view for {role}; choose another view name"
            )
        conn.execute(pgsql.SQL("DROP VIEW {}").format(qualified))
    conn.execute(
        pgsql.SQL("CREATE VIEW {} WITH (security_invoker = true) AS SELECT {} FROM {}").format(
            qualified, pgsql.SQL(", ").join(map(pgsql.Identifier, view.columns)), pgsql.SQL(table)
        )
    )
    conn.execute(pgsql.SQL("COMMENT ON VIEW {} IS {}").format(qualified, pgsql.Literal(marker)))
