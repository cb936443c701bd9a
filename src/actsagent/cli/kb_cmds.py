"""`actsagent kb build|show|edit|export|context|add-example|examples|retract|undo`: the knowledge base."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from actsagent.cli._common import DbOption, JsonOption, console, print_json, rows_table
from actsagent.errors import UserError

kb_app = typer.Typer(
    no_args_is_help=True,
    help="The knowledge base: descriptions of tables and columns, hierarchical retrieval, verified examples.",
)
KbFileOption = typer.Option(
    None,
    "--kb-file",
    help="keep the knowledge base in this JSON file (default: in the PostgreSQL database, else under ACTSAGENT_HOME)",
)


def register(app: typer.Typer) -> None:
    app.add_typer(kb_app, name="kb")


def _open(db: str | None):
    from actsagent.demo import open_target

    return open_target(db)


def _loaded(database, kb_file: Path | None):
    from actsagent import kb

    k = kb.load(database, path=kb_file)
    if k is None:
        raise UserError(f"no knowledge base for {database.name}: build one with `actsagent kb build`")
    return k


@kb_app.command("build")
def build_cmd(
    db: str = DbOption,
    glossary: Path = typer.Option(None, "--glossary", help="a glossary file (.json or .toml)"),
    llm: bool = typer.Option(False, "--llm", help="have the configured LLM write the descriptions"),
    replace: bool = typer.Option(False, "--replace", help="start over: drop manual descriptions, examples and history"),
    kb_file: Path = KbFileOption,
    json_out: bool = JsonOption,
) -> None:
    """Build (or refresh) the knowledge base of a database."""
    from actsagent import kb
    from actsagent.kb.store import open_store

    model = None
    if llm:
        from actsagent.llm import get_chat_model

        model = get_chat_model()
        if model is None:
            raise UserError("--llm needs a configured LLM (OPENAI_API_KEY / OPENAI_BASE_URL)")
    with _open(db) as database:
        k = kb.build(database, glossary=glossary, model=model, path=kb_file, replace=replace)
        where = open_store(database, path=kb_file).location
    summary = {
        "database": k.database,
        "tables": len(k.tables),
        "columns": sum(len(t.columns) for t in k.tables),
        "described_by": k.described_by,
        "examples": len(k.active_examples()),
        "stored_in": where,
    }
    if json_out:
        print_json(summary)
    else:
        console.print(
            f"[green]built[/] knowledge base of {escape(k.database)}: {summary['tables']} tables, "
            f"{summary['columns']} columns ({k.described_by}), stored in {escape(where)}"
        )


@kb_app.command("show")
def show_cmd(
    db: str = DbOption,
    table: list[str] = typer.Option(None, "--table", "-t", help="only these tables"),
    kb_file: Path = KbFileOption,
    json_out: bool = JsonOption,
) -> None:
    """Show the descriptions, with where each came from."""
    with _open(db) as database:
        k = _loaded(database, kb_file)
    wanted = {t.lower() for t in table or []}
    missing = wanted - {t.name.lower() for t in k.tables}
    if missing:
        raise UserError(f"no such table in the knowledge base: {', '.join(sorted(missing))}")
    tables = [t for t in k.tables if not wanted or t.name.lower() in wanted]
    if json_out:
        print_json(
            {
                "database": k.database,
                "tables": [t.model_dump(mode="json", exclude={"columns": {"__all__": {"values"}}}) for t in tables],
            }
        )
        return
    for t in tables:
        console.print(f"[bold]{escape(t.name)}[/] [dim]({t.source})[/] {escape(t.description)}")
        for c in t.columns:
            console.print(f"  [cyan]{escape(c.name)}[/] {escape(c.type)} [dim]({c.source})[/] {escape(c.description)}")
    if k.examples:
        console.print(f"{len(k.active_examples())} verified example(s); `actsagent kb examples` lists them")


@kb_app.command("edit")
def edit_cmd(
    table: str = typer.Argument(..., help="table, or table.column"),
    description: str = typer.Option(..., "--description", "-d", help="the new description"),
    by: str = typer.Option("user", "--by", help="who made the change (kept in the history)"),
    db: str = DbOption,
    kb_file: Path = KbFileOption,
) -> None:
    """Set a description by hand (marked manual; rebuilds keep it; `kb undo` reverts it)."""
    from actsagent import kb

    name, _, column = table.partition(".")
    with _open(db) as database:
        ch = kb.edit_description(database, name, column or None, description, by=by, path=kb_file)
    console.print(f"[green]edited[/] {escape(ch.target)} (was: {escape(ch.before or '')})")


@kb_app.command("export")
def export_cmd(
    db: str = DbOption,
    out: Path = typer.Option(None, "--out", "-o", help="write to this file (default: stdout)"),
    kb_file: Path = KbFileOption,
) -> None:
    """Export the knowledge base as JSON (tables, columns, relationships, examples, history)."""
    from actsagent.kb import dumps

    with _open(db) as database:
        text = dumps(_loaded(database, kb_file))
    if out is None:
        typer.echo(text)
    else:
        out.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {escape(str(out))}")


@kb_app.command("context")
def context_cmd(
    question: str = typer.Argument(..., help="a question about the data"),
    db: str = DbOption,
    budget: int = typer.Option(2200, "--budget", help="characters the context may use"),
    evidence: str = typer.Option("", "--evidence", help="a hint that goes with the question"),
    kb_file: Path = KbFileOption,
    json_out: bool = JsonOption,
) -> None:
    """Show the schema context retrieval gives a question (what a prompt would see)."""
    from actsagent import kb

    with _open(db) as database:
        ctx = kb.context_for(question, database, budget, evidence=evidence, path=kb_file)
    if json_out:
        print_json(ctx)
        return
    console.print(ctx.text, markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"[dim]{len(ctx.text)} of {ctx.budget_chars} chars; {len(ctx.tables)}/{ctx.total_tables} tables, "
        f"{len(ctx.columns)}/{ctx.total_columns} columns; relevance {ctx.relevance}, completeness "
        f"{ctx.completeness}, {ctx.iterations} pass(es)[/]"
    )


@kb_app.command("add-example")
def add_example_cmd(
    question: str = typer.Option(..., "--question", "-q"),
    sql: str = typer.Option(..., "--sql", "-s"),
    verified_by: str = typer.Option(..., "--verified-by", help="who checked that the SQL answers the question"),
    reference: str = typer.Option("", "--reference", help="a ticket, run id or benchmark key"),
    db: str = DbOption,
    kb_file: Path = KbFileOption,
    json_out: bool = JsonOption,
) -> None:
    """Add a verified (question, SQL): it must pass the guard and run; similar questions then find its columns."""
    from actsagent import kb

    with _open(db) as database:
        ex = kb.add_example(
            database,
            question,
            sql,
            kb.Provenance(source="user", verified_by=verified_by, reference=reference),
            path=kb_file,
        )
    if json_out:
        print_json(ex)
    else:
        console.print(f"[green]added[/] example {ex.id}: tables {', '.join(ex.tables)}")


@kb_app.command("examples")
def examples_cmd(
    db: str = DbOption,
    kb_file: Path = KbFileOption,
    all_: bool = typer.Option(False, "--all", help="include retracted examples"),
    json_out: bool = JsonOption,
) -> None:
    """Review the verified examples and who vouched for them."""
    with _open(db) as database:
        k = _loaded(database, kb_file)
    exs = k.examples if all_ else k.active_examples()
    if json_out:
        print_json([e.model_dump(mode="json") for e in exs])
        return
    console.print(
        rows_table(
            ["id", "status", "question", "tables", "verified by", "source", "added"],
            [
                [
                    e.id,
                    e.status,
                    e.question[:60],
                    ", ".join(e.tables),
                    e.provenance.verified_by,
                    e.provenance.source,
                    e.added_at,
                ]
                for e in exs
            ],
        )
    )


@kb_app.command("retract")
def retract_cmd(
    example_id: str = typer.Argument(...),
    reason: str = typer.Option(..., "--reason"),
    by: str = typer.Option("user", "--by"),
    db: str = DbOption,
    kb_file: Path = KbFileOption,
) -> None:
    """Take a verified example back (kept in the audit trail, no longer used)."""
    from actsagent import kb

    with _open(db) as database:
        kb.retract_example(database, example_id, reason=reason, by=by, path=kb_file)
    console.print(f"[green]retracted[/] {escape(example_id)}")


@kb_app.command("undo")
def undo_cmd(db: str = DbOption, kb_file: Path = KbFileOption) -> None:
    """Reverse the latest change (an edit, an added or a retracted example)."""
    from actsagent import kb

    with _open(db) as database:
        ch = kb.undo(database, path=kb_file)
    console.print(f"[green]undone[/] {ch.kind} of {escape(ch.target)} ({ch.at})")
