"""A read-only PostgreSQL login role for the copilot: the database-side defence behind the guard.

The guard is a filter in our process; the grants are the boundary the server enforces whatever
SQL arrives. The role gets USAGE and SELECT on the chosen schemas and nothing else. The settings
(default_transaction_read_only, statement_timeout, idle_in_transaction_session_timeout) are a
second layer a session could change with SET, which is why the grants, not the settings, carry the
weight. EXECUTE on set_config is revoked from PUBLIC (per database), so a SELECT cannot flip a
setting that a row-level-security policy reads; so is EXECUTE on the advisory-lock functions (a
session lock outlives the transaction), on pg_terminate_backend/pg_cancel_backend (a role may
signal its own sessions: every pooled connection of the copilot), on txid_current and
pg_current_xact_id (they consume transaction ids even in a read-only transaction), on the
functions behind pg_stat_activity and SELECT on the view itself (the sessions of one role, i.e.
of every tenant, would see each other's SQL). TEMPORARY on the database is revoked from PUBLIC the
same way, so a session that SETs the read-only default off still has nowhere to write. Login roles
that had these privileges through PUBLIC get them back by name (superusers bypass them anyway).
temp_file_limit is a superuser-only setting, so the role gets it as a default it cannot SET away.

Provisioning is idempotent: rerunning it resets the role to exactly this state. The embedded
server's queries run as one such role, ``actsagent_reader`` (``reader_url``), provisioned on first
use of each database and refreshed when a database is loaded.
"""

from __future__ import annotations

import re
import time
from typing import Any

import psycopg
from psycopg import sql as pgsql
from pydantic import BaseModel

from actsagent.config import Limits
from actsagent.db.admin import scalar, url_for
from actsagent.db.tenancy import Tenancy, TenancyReport, apply_tenancy
from actsagent.errors import DatabaseUnavailable, UserError

ROLE_MARKER = "actsagent read-only role"
READER = "actsagent_reader"  # the embedded server's query role
READER_CONNECTIONS = 32  # every process (CLI, copilot, tests) shares the one role
GRANTS_VERSION = "2"  # bump when provisioning changes, so databases provisioned before are redone
_MARK = "actsagent.grants"  # a per-database role setting: which provisioning this database had
_NAME = re.compile(r"^[a-z_][a-z0-9_$]{0,62}$")
# server objects a read-only role must not use, though PUBLIC may by default
_REVOKED_FUNCTIONS = (
    "set_config",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "txid_current",
    "pg_current_xact_id",
    "pg_stat_get_activity",
    "pg_stat_get_backend_activity",
)
_REVOKED_RELATIONS = ("pg_catalog.pg_stat_activity",)
_RETRYABLE = ("40001", "40P01", "XX000", "23505", "42710")  # concurrent provisioning from two processes


class RoleInfo(BaseModel, frozen=True):
    role: str
    database: str
    url: str  # connection string for the role (with the password when one was set)
    schemas: list[str]
    tables_granted: int
    statement_timeout_s: float
    idle_in_transaction_timeout_s: float
    connection_limit: int
    temp_file_limit_mb: int
    created: bool  # False when an existing role was reset
    tenancy: TenancyReport = TenancyReport()


def provision_readonly_role(
    admin: Any,
    role: str,
    *,
    schemas: list[str] | tuple[str, ...] = ("public",),
    password: str | None = None,
    statement_timeout_s: float = 5,
    idle_in_transaction_timeout_s: float = 10,
    connection_limit: int = 5,
    temp_file_limit_mb: int | None = None,
    tenancy: Tenancy | None = None,
    adopt: bool = False,
) -> RoleInfo:
    """Create or reset ``role`` as a read-only login on the database of ``admin``.

    ``admin`` is a ``PostgresDatabase`` or a connection URL with enough rights (superuser, or owner
    of the schemas with CREATEROLE). Returns the role's connection URL. An existing role that
    actsagent did not create is refused unless ``adopt`` (it will lose its memberships and
    attributes); a superuser or the connected role itself is always refused. ``tenancy`` adds
    row-level security keyed by a per-caller setting and column-restricted views (``db/tenancy.py``).
    """
    url = admin if isinstance(admin, str) else getattr(admin, "url", None)
    if getattr(admin, "dialect", "postgres") != "postgres" or not url:
        raise UserError("a read-only role can only be provisioned on PostgreSQL")
    if not _NAME.match(role):
        raise UserError(f"role name {role!r} is not a plain lower-case identifier (letters, digits, _)")
    if statement_timeout_s <= 0 or connection_limit < 1 or idle_in_transaction_timeout_s <= 0:
        raise UserError("timeouts must be positive and the connection limit at least 1")
    schemas = list(dict.fromkeys(schemas))
    if not schemas:
        raise UserError("give at least one schema")
    temp_mb = temp_file_limit_mb or Limits().temp_file_limit_mb
    if temp_mb < 1:
        raise UserError("the temp file limit must be at least 1 MB")
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=max(2, int(Limits().connect_timeout_s)))
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot connect as administrator: {str(e).strip().splitlines()[0]}") from e
    with conn:
        for attempt in range(4):
            try:
                with conn.transaction():
                    # one provisioning per database at a time; another database's races are retried
                    conn.execute("SELECT pg_advisory_xact_lock(hashtext('actsagent.provision'))")
                    return _provision(
                        conn,
                        url,
                        role,
                        schemas,
                        password,
                        statement_timeout_s,
                        idle_in_transaction_timeout_s,
                        connection_limit,
                        temp_mb,
                        tenancy,
                        adopt,
                    )
            except psycopg.Error as e:
                if e.sqlstate not in _RETRYABLE or attempt == 3:
                    raise UserError(f"provisioning role {role!r} failed: {e.diag.message_primary or e}") from e
                time.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


def _provision(
    conn: psycopg.Connection,
    url: str,
    role: str,
    schemas: list[str],
    password: str | None,
    timeout_s: float,
    idle_s: float,
    conn_limit: int,
    temp_mb: int,
    tenancy: Tenancy | None,
    adopt: bool,
) -> RoleInfo:
    """Every step in the caller's transaction: a failure leaves the role as it was."""
    ident = pgsql.Identifier(role)
    dbname = scalar(conn, "SELECT current_database()")
    missing = [s for s in schemas if not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [s]).fetchone()]
    if missing:
        raise UserError(f"no such schema in {dbname}: {', '.join(missing)}")
    exists = conn.execute(
        "SELECT rolsuper, rolname = current_user, coalesce(shobj_description(oid, 'pg_authid'), '') "
        "FROM pg_roles WHERE rolname = %s",
        [role],
    ).fetchone()
    if exists:
        superuser, is_self, comment = exists
        if superuser or is_self:
            raise UserError(f"role {role!r} is a superuser or the role you are connected as; choose another name")
        if comment != ROLE_MARKER and not adopt:
            raise UserError(
                f"role {role!r} exists and was not made by actsagent; choose another name "
                "(or adopt it: it loses its memberships, attributes and settings)"
            )
        owned = scalar(
            conn, "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = %s", [role]
        )
        if owned:
            raise UserError(
                f"role {role!r} owns {owned} relations in {dbname}; an owner can write to them, "
                "so choose another role name"
            )
    # 1. the role itself: a login with no special attributes
    attrs = pgsql.SQL(
        "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT CONNECTION LIMIT {}"
    ).format(pgsql.Literal(conn_limit))
    verb = pgsql.SQL("ALTER ROLE") if exists else pgsql.SQL("CREATE ROLE")
    conn.execute(pgsql.SQL("{} {} {}").format(verb, ident, attrs))
    if password is not None:
        conn.execute(pgsql.SQL("ALTER ROLE {} PASSWORD {}").format(ident, pgsql.Literal(password)))
    conn.execute(pgsql.SQL("COMMENT ON ROLE {} IS {}").format(ident, pgsql.Literal(ROLE_MARKER)))
    for (parent,) in conn.execute(
        "SELECT b.rolname FROM pg_auth_members m JOIN pg_roles a ON a.oid = m.member "
        "JOIN pg_roles b ON b.oid = m.roleid WHERE a.rolname = %s",
        [role],
    ).fetchall():
        conn.execute(pgsql.SQL("REVOKE {} FROM {}").format(pgsql.Identifier(parent), ident))
    # 2. settings that hold whatever SQL arrives. A session can SET most of them back, and an ordinary role
    #    may even ALTER ROLE CURRENT_USER SET its own defaults: the grants are the boundary, provisioning
    #    resets every default, and PostgresDatabase re-applies read-only and the timeout per transaction.
    #    temp_file_limit is superuser-only: the role cannot SET it, so its default holds.
    conn.execute(pgsql.SQL("ALTER ROLE {} RESET ALL").format(ident))
    for name, value in (
        ("default_transaction_read_only", "on"),
        ("statement_timeout", f"{int(timeout_s * 1000)}ms"),
        ("idle_in_transaction_session_timeout", f"{int(idle_s * 1000)}ms"),
        ("temp_file_limit", f"{temp_mb}MB"),
    ):
        conn.execute(pgsql.SQL("ALTER ROLE {} SET {} = {}").format(ident, pgsql.Identifier(name), pgsql.Literal(value)))
    # 3. nobody but owners may create objects in public
    if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'public'").fetchone():
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    conn.execute(pgsql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(pgsql.Identifier(dbname), ident))
    # 4. SELECT on the chosen schemas, now and for tables created later
    granted = 0
    for schema in schemas:
        s = pgsql.Identifier(schema)
        conn.execute(pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}").format(s, ident))
        conn.execute(pgsql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA {} FROM {}").format(s, ident))
        conn.execute(pgsql.SQL("REVOKE CREATE ON SCHEMA {} FROM {}").format(s, ident))
        conn.execute(pgsql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(s, ident))
        conn.execute(pgsql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(s, ident))
        owners = {
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                "c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r','v','m','p','f')",
                [schema],
            )
        }
        owners.add(scalar(conn, "SELECT current_user"))
        for owner in sorted(owners):
            conn.execute(
                pgsql.SQL("ALTER DEFAULT PRIVILEGES FOR ROLE {} IN SCHEMA {} GRANT SELECT ON TABLES TO {}").format(
                    pgsql.Identifier(owner), s, ident
                )
            )
        granted += scalar(
            conn,
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r','v','m','p','f')",
            [schema],
        )
    # 5. functions and catalog views PUBLIC may use (see the module docstring): revoke them from PUBLIC,
    #    first giving them back by name to the login roles that had them that way, and from the role
    others = [pgsql.Identifier(r) for (r,) in _other_login_roles(conn, role)]
    for privilege, kind, obj in [("EXECUTE", "FUNCTION", fn) for fn in _revoked_functions(conn)] + [
        ("SELECT", "TABLE", rel) for rel in _REVOKED_RELATIONS
    ]:
        target = pgsql.SQL(f"{privilege} ON {kind} {obj}")  # obj is catalog text (regprocedure/regclass)
        if _public_may(conn, privilege, kind, obj):
            for other in others:
                conn.execute(pgsql.SQL("GRANT {} TO {}").format(target, other))
            conn.execute(pgsql.SQL("REVOKE {} FROM PUBLIC").format(target))
        conn.execute(pgsql.SQL("REVOKE {} FROM {}").format(target, ident))
    # 6. temporary tables: PUBLIC may create them by default, which a session that SETs the read-only
    #    default off could use as scratch space; same revoke-and-give-back as above
    db_ident = pgsql.Identifier(dbname)
    if _public_has_temp(conn):
        for other in others:
            conn.execute(pgsql.SQL("GRANT TEMPORARY ON DATABASE {} TO {}").format(db_ident, other))
        conn.execute(pgsql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(db_ident))
    conn.execute(pgsql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM {}").format(db_ident, ident))
    # 7. row-level security and column-restricted views: those asked for, then all the database holds for
    #    the role (step 4 granted SELECT on every table again, so this always runs)
    report = apply_tenancy(conn, role, tenancy)
    # 8. the mark reader_url checks to skip all this next time
    conn.execute(
        pgsql.SQL("ALTER ROLE {} IN DATABASE {} SET {} = {}").format(
            ident, db_ident, pgsql.SQL(_MARK), pgsql.Literal(GRANTS_VERSION)
        )
    )
    return RoleInfo(
        role=role,
        database=dbname,
        url=_role_url(url, role, password),
        schemas=schemas,
        tables_granted=granted,
        statement_timeout_s=timeout_s,
        idle_in_transaction_timeout_s=idle_s,
        connection_limit=conn_limit,
        temp_file_limit_mb=temp_mb,
        created=not exists,
        tenancy=report,
    )


def _other_login_roles(conn: psycopg.Connection, role: str) -> list[tuple[str]]:
    """Login roles that keep privileges PUBLIC loses: not superusers (they bypass), not our read-only roles."""
    return conn.execute(
        "SELECT r.rolname FROM pg_roles r WHERE r.rolcanlogin AND NOT r.rolsuper AND r.rolname <> %s "
        "AND r.rolname NOT LIKE 'pg\\_%%' "
        "AND coalesce(shobj_description(r.oid, 'pg_authid'), '') <> %s",
        [role, ROLE_MARKER],
    ).fetchall()


def _public_has_temp(conn: psycopg.Connection) -> bool:
    acl = conn.execute("SELECT datacl IS NULL FROM pg_database WHERE datname = current_database()").fetchone()
    if acl and acl[0]:
        return True  # NULL acl: the default grants CONNECT and TEMPORARY to PUBLIC
    return bool(
        conn.execute(
            "SELECT 1 FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = current_database() "
            "AND a.grantee = 0 AND a.privilege_type = 'TEMPORARY'"
        ).fetchone()
    )


def _revoked_functions(conn: psycopg.Connection) -> list[str]:
    """Every overload of the revoked functions and of pg_*advisory*, as regprocedure text (from the catalog)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'pg_catalog' AND (p.proname = ANY(%s) OR p.proname LIKE 'pg\\_%%advisory%%') "
            "ORDER BY 1",
            [list(_REVOKED_FUNCTIONS)],
        ).fetchall()
    ]


def _public_may(conn: psycopg.Connection, privilege: str, kind: str, obj: str) -> bool:
    check = "has_function_privilege" if kind == "FUNCTION" else "has_table_privilege"
    return bool(scalar(conn, f"SELECT {check}('public', %s, %s)", [obj, privilege]))


def reader_url(admin_url: str, *, refresh: bool = False) -> str:
    """The URL of ``actsagent_reader`` on the database of ``admin_url`` (the embedded server's superuser),
    provisioned first when this database has not been, or when ``refresh`` (after loading data)."""
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            current = not refresh and _reader_is_current(conn)
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot connect as administrator: {str(e).strip().splitlines()[0]}") from e
    if current:
        return _role_url(admin_url, READER, None)
    return provision_readonly_role(
        admin_url, READER, schemas=user_schemas(admin_url), connection_limit=READER_CONNECTIONS
    ).url


def reader_status(admin_url: str) -> dict[str, Any]:
    """For ``db status``: the databases, the role queries run as and where it is provisioned."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        databases = [r[0] for r in conn.execute("SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY 1")]
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [READER]).fetchone()
        provisioned = [
            r[0]
            for r in conn.execute(
                "SELECT d.datname FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
                "JOIN pg_database d ON d.oid = s.setdatabase WHERE r.rolname = %s ORDER BY 1",
                [READER],
            )
        ]
        admin = scalar(conn, "SELECT current_user")
    return {
        "databases": databases,
        "query_role": READER,
        "query_role_superuser": bool(row and row[0]),
        "query_role_databases": provisioned,
        "admin_role": admin,
    }


def user_schemas(url: str) -> list[str]:
    """Schemas the reader may read: all but the system ones and actsagent's own (its caches hold values
    computed as the administrator)."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%%' "
                "AND nspname NOT IN ('information_schema', 'actsagent') ORDER BY 1"
            )
        ]


def _reader_is_current(conn: psycopg.Connection) -> bool:
    """The mark of this provisioning version is there and every user schema is granted."""
    row = conn.execute(
        "SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
        "JOIN pg_database d ON d.oid = s.setdatabase WHERE r.rolname = %s AND d.datname = current_database()",
        [READER],
    ).fetchone()
    if not row or f"{_MARK}={GRANTS_VERSION}" not in (row[0] or []):
        return False
    return bool(
        scalar(
            conn,
            "SELECT coalesce(bool_and(has_schema_privilege(%s, oid, 'USAGE')), true) FROM pg_namespace "
            "WHERE nspname NOT LIKE 'pg\\_%%' AND nspname NOT IN ('information_schema', 'actsagent')",
            [READER],
        )
    )


def _role_url(admin_url: str, role: str, password: str | None) -> str:
    """The admin's connection string with the role as user (same host, socket, port and database)."""
    return url_for(admin_url, user=role, password=password)
