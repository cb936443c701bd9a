"""`actsagent sql`, `actsagent schema` and `actsagent db status|start|stop|load|provision-role`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from actsagent.cli._common import (
    DbOption,
    JsonOption,
    SettingOption,
    console,
    db_app,
    err_console,
    print_json,
    rows_table,
)
from actsagent.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("sql")(run_sql)
    app.command("schema")(show_schema)


def run_sql(
    sql: str = typer.Argument(..., help="one read-only SQL statement"),
    db: str = DbOption,
    max_rows: int = typer.Option(1000, help="row cap enforced in the fetch and the injected LIMIT"),
    timeout: float = typer.Option(5.0, help="statement timeout in seconds"),
    setting: list[str] = SettingOption,
    json_out: bool = JsonOption,
) -> None:
    """Run guarded SQL (strict policy: one read-only statement, forced LIMIT, reviewed functions)."""
    from actsagent.config import Limits
    from actsagent.db.settings import parse_assignments
    from actsagent.demo import open_target
    from actsagent.guard import Policy, run_guarded

    database = open_target(
        db, limits=Limits(statement_timeout_s=timeout, max_rows=max_rows), settings=parse_assignments(setting or [])
    )
    with database:
        res = run_guarded(database, sql, Policy.strict(max_rows=max_rows))
    if json_out:
        print_json(res)
    elif res.ok:
        console.print(f"[dim]{res.sql}[/]")
        console.print(rows_table([c.name for c in res.columns], res.rows))
        more = {"rows": " (cut at the row cap)", "bytes": " (cut at the result byte cap)"}.get(
            res.truncated_by or "", ""
        )
        console.print(f"[green]{res.row_count} rows{more}[/] in {res.elapsed_ms:.1f} ms")
    else:
        err_console.print(f"[bold red]{res.error_class.value}[/] {res.message}")
        if res.hint:
            err_console.print(f"hint: {res.hint}")
    if not res.ok:
        raise typer.Exit(1)


def show_schema(
    db: str = DbOption,
    table: list[str] = typer.Option(None, "--table", "-t", help="only these tables"),
    setting: list[str] = SettingOption,
    json_out: bool = JsonOption,
) -> None:
    """Show the schema as the compact, commented listing the agent's prompts use."""
    from actsagent.db.settings import parse_assignments
    from actsagent.demo import open_target

    database = open_target(db, settings=parse_assignments(setting or []))
    try:
        schema = database.schema()
    finally:
        database.close()
    if table:
        missing = [t for t in table if schema.table(t) is None]
        if missing:
            raise UserError(f"no such table: {', '.join(missing)}")
    if json_out:
        data = schema.model_dump(mode="json")
        if table:
            data["tables"] = [t for t in data["tables"] if t["name"].lower() in {x.lower() for x in table}]
        print_json(data)
    else:
        console.print(schema.render(tables=table or None), markup=False, highlight=False, soft_wrap=True)


@db_app.command("status")
def status(json_out: bool = JsonOption) -> None:
    """Show the embedded PostgreSQL: data directory, whether it runs, databases, the role queries run as."""
    from actsagent.db import embedded
    from actsagent.db.roles import reader_status

    info: dict[str, Any] = embedded.status()
    if info["running"]:
        info.update(reader_status(str(info["url"])))
    info["value_index"] = value_index_location()
    if json_out:
        print_json(info)
        return
    state = "[green]running[/]" if info["running"] else "[yellow]stopped[/] (starts on demand)"
    console.print(f"embedded PostgreSQL: {state}\n  data: {info['pgdata']}")
    if info["running"]:
        console.print(f"  url:  {info['url']}\n  databases: {', '.join(info['databases'])}")
        kind = "a superuser!" if info["query_role_superuser"] else "read-only, not a superuser"
        where = ", ".join(info["query_role_databases"]) or "no database yet (provisioned on first use)"
        console.print(
            f"  queries run as: [bold]{info['query_role']}[/] ({kind}) on {where}\n"
            f"  administration (loading, sandbox copies) runs as: {info['admin_role']}",
            highlight=False,
        )
    console.print(f"  SafeQL value index: {info['value_index']}", highlight=False, markup=False)


def value_index_location() -> str:
    """Where SafeQL keeps its pgvector value index (``ACTSAGENT_VALUE_INDEX_URL`` moves it out of user databases)."""
    import os

    from actsagent.db.admin import redact
    from actsagent.db.value_store import INDEX_URL_VAR

    url = os.environ.get(INDEX_URL_VAR)
    if url:
        return f"{redact(url)} (schema actsagent, from {INDEX_URL_VAR})"
    return (
        "schema actsagent of each PostgreSQL database when the connecting role may create it there, "
        f"otherwise in memory per process (set {INDEX_URL_VAR} to keep it in another database)"
    )


@db_app.command("start")
def start(json_out: bool = JsonOption) -> None:
    """Start the embedded PostgreSQL (it also starts by itself when needed) and load the demo database."""
    from actsagent.db import embedded
    from actsagent.demo import ensure_demo

    ensure_demo().close()
    url = embedded.server_url("postgres")
    print_json({"url": url}) if json_out else console.print(f"embedded PostgreSQL running: {url}")


@db_app.command("stop")
def stop() -> None:
    """Stop the embedded PostgreSQL."""
    from actsagent.db import embedded

    embedded.stop()
    console.print("embedded PostgreSQL stopped")


@db_app.command("load")
def load(
    path: Path = typer.Argument(..., help="a .sql script or a SQLite file"),
    name: str = typer.Option(
        None, "--name", help="database to create on the embedded server (default: the file's stem)"
    ),
    replace: bool = typer.Option(False, help="drop the database first if it exists"),
    json_out: bool = JsonOption,
) -> None:
    """Load a .sql script or a SQLite file into a new database on the embedded server."""
    from actsagent.db.loader import load_embedded

    loaded = load_embedded(path, name or path.stem, if_exists="replace" if replace else "error")
    if json_out:
        fields = {"skipped_extensions"} if path.suffix.lower() == ".sql" else {"rows"}
        print_json(loaded.model_dump(include=fields | {"database", "url"}))
        return
    console.print(f"[green]loaded[/] {path.name} into database [bold]{loaded.database}[/] ({loaded.url})")
    if loaded.skipped_extensions:
        console.print(f"[yellow]skipped unavailable extensions:[/] {', '.join(loaded.skipped_extensions)}")
    for t, n in loaded.rows.items():
        console.print(f"  {t}: {n} rows")


@db_app.command("provision-role")
def provision_role(
    name: str = typer.Argument(..., help="role to create or reset"),
    schema: list[str] = typer.Option(["public"], "--schema", help="schema to grant SELECT on (repeat for several)"),
    db: str = DbOption,
    password: str = typer.Option(
        None, "--password", help="login password (the embedded server uses trust auth on its socket and needs none)"
    ),
    timeout: float = typer.Option(5.0, "--timeout", help="the role's statement_timeout in seconds"),
    connection_limit: int = typer.Option(5, "--connection-limit", min=1),
    temp_file_limit: int = typer.Option(
        None, "--temp-file-limit", min=1, help="the role's temp_file_limit in MB (default 256)"
    ),
    tenant_setting: str = typer.Option(
        None, "--tenant-setting", help="the per-caller setting row-level security compares with, e.g. app.tenant_id"
    ),
    rls: list[str] = typer.Option(
        None,
        "--rls",
        help="TABLE:COLUMN to protect with row-level "
        "security: the role sees rows whose COLUMN equals the setting "
        "(repeat for several)",
    ),
    view: list[str] = typer.Option(
        None,
        "--view",
        help="VIEW=TABLE:COL1,COL2: a security_invoker "
        "view with only these columns; the role may read only them "
        "(repeat for several)",
    ),
    adopt: bool = typer.Option(
        False,
        "--adopt",
        help="reset an existing role actsagent did not create (it loses its memberships, attributes and settings)",
    ),
    json_out: bool = JsonOption,
) -> None:
    """Create or reset a read-only PostgreSQL login role (SELECT only, read-only default, timeouts), optionally
    with row-level security keyed by a per-caller setting and column-restricted views."""
    from actsagent.db.roles import provision_readonly_role
    from actsagent.db.tenancy import Tenancy, parse_rls, parse_view
    from actsagent.demo import open_target

    tenancy = None
    if tenant_setting or rls or view:
        tenancy = Tenancy(
            setting=tenant_setting, rls=[parse_rls(r) for r in rls or []], views=[parse_view(v) for v in view or []]
        )
    database = open_target(db)
    try:
        if database.dialect != "postgres":
            raise UserError("read-only roles are for PostgreSQL; SQLite files are opened read-only already")
        admin = getattr(database, "admin_url", None) or database.url  # the embedded default queries as a role
        info = provision_readonly_role(
            admin,
            name,
            schemas=schema,
            password=password,
            statement_timeout_s=timeout,
            connection_limit=connection_limit,
            temp_file_limit_mb=temp_file_limit,
            tenancy=tenancy,
            adopt=adopt,
        )
    finally:
        database.close()
    if json_out:
        print_json(info)
        return
    verb = "created" if info.created else "reset"
    console.print(
        f"[green]{verb}[/] read-only role [bold]{info.role}[/] on {info.database}: SELECT on "
        f"{info.tables_granted} relations in {', '.join(info.schemas)}; statement_timeout "
        f"{info.statement_timeout_s:g}s, temp_file_limit {info.temp_file_limit_mb} MB, connection limit "
        f"{info.connection_limit}"
    )
    t = info.tenancy
    if t and t.rls_tables:
        console.print(
            f"row-level security on {', '.join(t.rls_tables)}: rows where the column equals "
            f"current_setting('{t.setting}')",
            highlight=False,
        )
    if t and t.views:
        console.print(f"column views: {', '.join(t.views)}", highlight=False)
    if t and t.views_revoked:
        console.print(
            f"[yellow]no longer readable by the role[/] (plain views over protected tables): "
            f"{', '.join(t.views_revoked)}",
            highlight=False,
        )
    console.print(f"connect with: --db '{info.url}'", markup=False, highlight=False)
