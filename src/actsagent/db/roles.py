"""A read-only PostgreSQL login role for the copilot: the database-side defence behind the guard.

The guard is a filter in our process; the grants are the boundary the server enforces whatever
SQL arrives. The role gets USAGE and SELECT on the chosen schemas and nothing else. The settings
(default_transaction_read_only, statement_timeout, idle_in_transaction_session_timeout) are a
second layer a session could change with SET, which is why the grants, not the settings, carry the
weight. EXECUTE on set_config is revoked from PUBLIC (per database), so a SELECT cannot flip a
setting that a row-level-security policy reads; so is EXECUTE on the advisory-lock functions.
TEMPORARY on the database is revoked from PUBLIC the same way, so a session that SETs the
read-only default off still has nowhere to write. Login roles that had these privileges through
PUBLIC get them back by name (superusers bypass them anyway).

Provisioning is idempotent: rerunning it resets the role to exactly this state.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import sql as pgsql
from pydantic import BaseModel

from actsagent.errors import DatabaseUnavailable, UserError

ROLE_MARKER = "actsagent read-only role"
_NAME = re.compile(r"^[a-z_][a-z0-9_$]{0,62}$")


class RoleInfo(BaseModel, frozen=True):
    role: str
    database: str
    url: str  # connection string for the role (with the password when one was set)
    schemas: list[str]
    tables_granted: int
    statement_timeout_s: float
    idle_in_transaction_timeout_s: float
    connection_limit: int
    created: bool  # False when an existing role was reset


def provision_readonly_role(admin: Any, role: str, *, schemas: list[str] | tuple[str, ...] = ("public",),
                            password: str | None = None, statement_timeout_s: float = 5,
                            idle_in_transaction_timeout_s: float = 10, connection_limit: int = 5,
                            adopt: bool = False) -> RoleInfo:
    """Create or reset ``role`` as a read-only login on the database of ``admin``.

    ``admin`` is a ``PostgresDatabase`` or a connection URL with enough rights (superuser, or owner
    of the schemas with CREATEROLE). Returns the role's connection URL. An existing role that
    actsagent did not create is refused unless ``adopt`` (it will lose its memberships and
    attributes); a superuser or the connected role itself is always refused.
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
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot connect as administrator: {str(e).strip().splitlines()[0]}") from e
    with conn:
        return _provision(conn, url, role, schemas, password, statement_timeout_s,
                          idle_in_transaction_timeout_s, connection_limit, adopt)


def _provision(conn: psycopg.Connection, url: str, role: str, schemas: list[str], password: str | None,
               timeout_s: float, idle_s: float, conn_limit: int, adopt: bool) -> RoleInfo:
    ident = pgsql.Identifier(role)
    dbname = conn.execute("SELECT current_database()").fetchone()[0]
    missing = [s for s in schemas if not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [s]).fetchone()]
    if missing:
        raise UserError(f"no such schema in {dbname}: {', '.join(missing)}")
    exists = conn.execute("SELECT rolsuper, rolname = current_user, coalesce(shobj_description(oid, 'pg_authid'), '') "
                          "FROM pg_roles WHERE rolname = %s", [role]).fetchone()
    if exists:
        superuser, is_self, comment = exists
        if superuser or is_self:
            raise UserError(f"role {role!r} is a superuser or the role you are connected as; choose another name")
        if comment != ROLE_MARKER and not adopt:
            raise UserError(f"role {role!r} exists and was not made by actsagent; choose another name "
                            "(or adopt it: it loses its memberships, attributes and settings)")
        owned = conn.execute("SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner "
                             "WHERE r.rolname = %s", [role]).fetchone()[0]
        if owned:
            raise UserError(f"role {role!r} owns {owned} relations in {dbname}; an owner can write to them, "
                            "so choose another role name")
    with conn.transaction():
        # 1. the role itself: a login with no special attributes
        attrs = pgsql.SQL("LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT "
                          "CONNECTION LIMIT {}").format(pgsql.Literal(conn_limit))
        verb = pgsql.SQL("ALTER ROLE") if exists else pgsql.SQL("CREATE ROLE")
        conn.execute(pgsql.SQL("{} {} {}").format(verb, ident, attrs))
        if password is not None:
            conn.execute(pgsql.SQL("ALTER ROLE {} PASSWORD {}").format(ident, pgsql.Literal(password)))
        conn.execute(pgsql.SQL("COMMENT ON ROLE {} IS {}").format(ident, pgsql.Literal(ROLE_MARKER)))
        for (parent,) in conn.execute("SELECT b.rolname FROM pg_auth_members m JOIN pg_roles a ON a.oid = m.member "
                                      "JOIN pg_roles b ON b.oid = m.roleid WHERE a.rolname = %s", [role]).fetchall():
            conn.execute(pgsql.SQL("REVOKE {} FROM {}").format(pgsql.Identifier(parent), ident))
        # 2. settings that hold whatever SQL arrives. A session can SET them back, and an ordinary role may
        #    even ALTER ROLE CURRENT_USER SET its own defaults: the grants are the boundary, provisioning
        #    resets every default, and PostgresDatabase re-applies read-only and the timeout per transaction.
        conn.execute(pgsql.SQL("ALTER ROLE {} RESET ALL").format(ident))
        for name, value in (("default_transaction_read_only", "on"),
                            ("statement_timeout", f"{int(timeout_s * 1000)}ms"),
                            ("idle_in_transaction_session_timeout", f"{int(idle_s * 1000)}ms")):
            conn.execute(pgsql.SQL("ALTER ROLE {} SET {} = {}").format(ident, pgsql.Identifier(name),
                                                                         pgsql.Literal(value)))
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
            owners = {r[0] for r in conn.execute(
                "SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                "c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r','v','m','p','f')", [schema])}
            owners.add(conn.execute("SELECT current_user").fetchone()[0])
            for owner in sorted(owners):
                conn.execute(pgsql.SQL("ALTER DEFAULT PRIVILEGES FOR ROLE {} IN SCHEMA {} GRANT SELECT ON TABLES "
                                       "TO {}").format(pgsql.Identifier(owner), s, ident))
            granted += conn.execute("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                                    "WHERE n.nspname = %s AND c.relkind IN ('r','v','m','p','f')",
                                    [schema]).fetchone()[0]
        # 5. set_config and the advisory-lock functions: revoke from PUBLIC, first giving them back to
        #    the login roles that had them that way (advisory locks let a session stall other sessions)
        others = _other_login_roles(conn, role)
        for fn in _revoked_functions(conn):
            if _public_can_execute(conn, fn):
                for (other,) in others:
                    conn.execute(pgsql.SQL("GRANT EXECUTE ON FUNCTION " + fn + " TO {}").format(
                        pgsql.Identifier(other)))
                conn.execute("REVOKE EXECUTE ON FUNCTION " + fn + " FROM PUBLIC")
            conn.execute(pgsql.SQL("REVOKE EXECUTE ON FUNCTION " + fn + " FROM {}").format(ident))
        # 6. temporary tables: PUBLIC may create them by default, which a session that SETs the read-only
        #    default off could use as scratch space; same revoke-and-give-back as set_config
        db_ident = pgsql.Identifier(dbname)
        if _public_has_temp(conn):
            for (other,) in _other_login_roles(conn, role):
                conn.execute(pgsql.SQL("GRANT TEMPORARY ON DATABASE {} TO {}").format(
                    db_ident, pgsql.Identifier(other)))
            conn.execute(pgsql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(db_ident))
        conn.execute(pgsql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM {}").format(db_ident, ident))
    return RoleInfo(role=role, database=dbname, url=_role_url(url, role, password), schemas=schemas,
                    tables_granted=granted, statement_timeout_s=timeout_s, idle_in_transaction_timeout_s=idle_s,
                    connection_limit=conn_limit, created=not exists)


def _other_login_roles(conn: psycopg.Connection, role: str) -> list[tuple[str]]:
    """Login roles that keep privileges PUBLIC loses: not superusers (they bypass), not our read-only roles."""
    return conn.execute(
        "SELECT r.rolname FROM pg_roles r WHERE r.rolcanlogin AND NOT r.rolsuper AND r.rolname <> %s "
        "AND r.rolname NOT LIKE 'pg\\_%%' "
        "AND coalesce(shobj_description(r.oid, 'pg_authid'), '') <> %s", [role, ROLE_MARKER]).fetchall()


def _public_has_temp(conn: psycopg.Connection) -> bool:
    acl = conn.execute("SELECT datacl IS NULL FROM pg_database WHERE datname = current_database()").fetchone()
    if acl and acl[0]:
        return True  # NULL acl: the default grants CONNECT and TEMPORARY to PUBLIC
    return bool(conn.execute(
        "SELECT 1 FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = current_database() "
        "AND a.grantee = 0 AND a.privilege_type = 'TEMPORARY'").fetchone())


def _revoked_functions(conn: psycopg.Connection) -> list[str]:
    """set_config and every pg_*advisory* overload, as regprocedure text (safe to splice: from the catalog)."""
    return [r[0] for r in conn.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'pg_catalog' AND (p.proname = 'set_config' OR p.proname LIKE 'pg\\_%%advisory%%') "
        "ORDER BY 1").fetchall()]


def _public_can_execute(conn: psycopg.Connection, fn: str) -> bool:
    row = conn.execute("SELECT proacl IS NULL FROM pg_proc WHERE oid = %s::regprocedure", [fn]).fetchone()
    if row is None or row[0]:
        return True  # NULL acl means the default: PUBLIC may execute
    return bool(conn.execute(
        "SELECT 1 FROM aclexplode((SELECT proacl FROM pg_proc WHERE oid = %s::regprocedure)) a "
        "WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'", [fn]).fetchone())


def _role_url(admin_url: str, role: str, password: str | None) -> str:
    """The admin's connection string with the role as user (same host, socket, port and database)."""
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["user"] = role
    info.pop("password", None)
    if password is not None:
        info["password"] = password
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})
