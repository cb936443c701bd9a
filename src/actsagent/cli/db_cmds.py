"""`actsagent sql`, `actsagent schema` and `actsagent db status|load|stop`."""

from __future__ import annotations

from pathlib import Path

import typer

from actsagent.cli._common import DbOption, JsonOption, console, db_app, err_console, print_json, rows_table
from actsagent.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("sql")(run_sql)
    app.command("schema")(show_schema)


def run_sql(sql: str = typer.Argument(..., help="one read-only SQL statement"), db: str = DbOption,
            max_rows: int = typer.Option(1000, help="row cap enforced in the fetch and the injected LIMIT"),
            timeout: float = typer.Option(5.0, help="statement timeout in seconds"),
            json_out: bool = JsonOption) -> None:
    """Run guarded SQL (strict policy: one read-only statement, forced LIMIT, reviewed functions)."""
    from actsagent.config import Limits
    from actsagent.db import open_database
    from actsagent.guard import Policy, run_guarded

    database = open_database(db, limits=Limits(statement_timeout_s=timeout, max_rows=max_rows))
    res = run_guarded(database, sql, Policy.strict(max_rows=max_rows))
    if json_out:
        print_json(res)
    elif res.ok:
        console.print(f"[dim]{res.sql}[/]")
        console.print(rows_table([c.name for c in res.columns], res.rows))
        more = " (cut at the row cap)" if res.truncated else ""
        console.print(f"[green]{res.row_count} rows{more}[/] in {res.elapsed_ms:.1f} ms")
    else:
        err_console.print(f"[bold red]{res.error_class.value}[/] {res.message}")
        if res.hint:
            err_console.print(f"hint: {res.hint}")
    if not res.ok:
        raise typer.Exit(1)


def show_schema(db: str = DbOption, table: list[str] = typer.Option(None, "--table", "-t", help="only these tables"),
                json_out: bool = JsonOption) -> None:
    """Show the schema as the compact, commented listing the agent's prompts use."""
    from actsagent.db import open_database

    schema = open_database(db).schema()
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
    """Show the embedded PostgreSQL: data directory, whether it runs, databases."""
    import psycopg

    from actsagent.db import embedded

    info = embedded.status()
    if info["running"]:
        with psycopg.connect(str(info["url"])) as conn:
            info["databases"] = [r[0] for r in conn.execute(
                "SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY 1")]
    if json_out:
        print_json(info)
        return
    state = "[green]running[/]" if info["running"] else "[yellow]stopped[/] (starts on demand)"
    console.print(f"embedded PostgreSQL: {state}\n  data: {info['pgdata']}")
    if info["running"]:
        console.print(f"  url:  {info['url']}\n  databases: {', '.join(info['databases'])}")


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
def load(path: Path = typer.Argument(..., help="a .sql script or a SQLite file"),
         name: str = typer.Option(None, "--name", help="database to create on the embedded server "
                                                      "(default: the file's stem)"),
         replace: bool = typer.Option(False, help="drop the database first if it exists"),
         json_out: bool = JsonOption) -> None:
    """Load a .sql script or a SQLite file into a new database on the embedded server."""
    import psycopg
    from psycopg import sql as pgsql

    from actsagent.db import embedded
    from actsagent.db.loader import load_sql_file, load_sqlite_file

    if not path.is_file():
        raise UserError(f"file not found: {path}")
    dbname = name or path.stem
    admin = embedded.server_url("postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [dbname]).fetchone()
        if exists and not replace:
            raise UserError(f"database {dbname!r} exists already (use --replace or --name)")
        if exists:
            conn.execute(pgsql.SQL("DROP DATABASE {} WITH (FORCE)").format(pgsql.Identifier(dbname)))
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(dbname)))
    url = embedded.server_url(dbname)
    try:
        if path.suffix.lower() == ".sql":
            out = {"skipped_extensions": load_sql_file(url, path)}
        else:
            out = {"rows": load_sqlite_file(url, path)}
    except Exception:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(dbname)))
        raise
    out.update(database=dbname, url=url)
    if json_out:
        print_json(out)
    else:
        console.print(f"[green]loaded[/] {path.name} into database [bold]{dbname}[/] ({url})")
        if out.get("skipped_extensions"):
            console.print(f"[yellow]skipped unavailable extensions:[/] {', '.join(out['skipped_extensions'])}")
        for t, n in out.get("rows", {}).items():
            console.print(f"  {t}: {n} rows")
