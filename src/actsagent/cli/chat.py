"""``actsagent chat``: the copilot in a terminal, the same turns as the browser, printed as they stream.

Conversations go to the same store as the web copilot's, so a chat started here can be read
(and continued) in the browser.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from actsagent.cli._common import rows_table
from actsagent.graphs.tree import STATUS_MARK
from actsagent.web.flow import NO_LLM_NOTE, Flow, Step
from actsagent.web.models import ResultView, WebEvent
from actsagent.web.runner import record
from actsagent.web.store import ConversationStore

HELP = """Type a question, or a command:
  /run <SQL>       run your SQL (strict guard, read-only); end multi-line SQL with ';' or an empty line
  /repair <SQL>    have the agent repair SQL that fails or returns the wrong thing
  /schema          show the database schema
  /new             start a new conversation
  /help            this help
  /quit            leave (also Ctrl-D)"""


class ChatSession:
    """One terminal conversation: reads lines with ``read``, prints with ``console``."""

    def __init__(
        self,
        flow: Flow,
        store: ConversationStore,
        console: Console,
        read: Callable[[str], str] = input,
        max_rows: int = 30,
    ) -> None:
        self.flow = flow
        self.store = store
        self.console = console
        self.read = read
        self.max_rows = max_rows
        self.conv_id: str | None = None

    # input -----------------------------------------------------------------------------------
    def _line(self, prompt: str) -> str | None:
        try:
            return self.read(prompt)
        except EOFError:
            return None

    def _sql_arg(self, first: str) -> str | None:
        lines = [first] if first.strip() else []
        while not (lines and (lines[-1].rstrip().endswith(";"))):
            more = self._line("... ")
            if more is None or not more.strip():
                break
            lines.append(more)
        sql = "\n".join(lines).strip().rstrip(";").strip()
        return sql or None

    def run(self) -> int:
        """The loop; returns the number of turns that failed (for the exit code of scripted use)."""
        c = self.console
        c.print(f"[bold]actsagent copilot[/] on [cyan]{self.flow.db.label}[/]  ([dim]/help for commands[/])")
        if not self.flow.bridge.has_llm:
            c.print(Panel(NO_LLM_NOTE, border_style="yellow", title="no LLM"), soft_wrap=False)
        failures = 0
        while True:
            line = self._line("\nyou> ")
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            cmd, _, rest = text.partition(" ")
            if cmd in ("/quit", "/exit", "/q"):
                break
            if cmd == "/help":
                c.print(HELP, markup=False)
                continue
            if cmd == "/new":
                self.conv_id = None
                c.print("[dim]new conversation[/]")
                continue
            if cmd == "/schema":
                try:
                    c.print(self.flow.db.get().schema().render(), markup=False, highlight=False)
                except Exception as e:
                    c.print(f"[red]{e}[/]")
                continue
            if cmd in ("/run", "/repair"):
                sql = self._sql_arg(rest)
                if not sql:
                    c.print("[yellow]give the SQL after the command[/]")
                    continue
                status = self.turn("run" if cmd == "/run" else "repair", sql=sql)
            elif cmd.startswith("/"):
                c.print(f"[yellow]unknown command {cmd}[/] (/help lists them)")
                continue
            else:
                status = self.turn("ask", question=text)
            failures += status == "failed"
        return failures

    # turns -----------------------------------------------------------------------------------
    def turn(self, kind: str, *, question: str = "", sql: str | None = None) -> str:
        if self.conv_id is None:
            title = " ".join((question or sql or "").split())[:70] or "Terminal chat"
            self.conv_id = self.store.create_conversation(title, self.flow.db.label).id
        turn = self.store.add_turn(self.conv_id, kind, question=question, sql=sql)  # type: ignore[arg-type]
        previous = self.store.previous_turns(self.conv_id, turn.index)
        tid = turn.thread_id or turn.id
        if kind == "ask":
            steps: Iterator[Step] = self.flow.ask(question, thread_id=tid, previous=previous)
        elif kind == "repair":
            steps = self.flow.repair(sql or "", thread_id=tid, previous=previous)
        else:
            steps = self.flow.run_sql(sql or "", question=question)
        while True:
            status = "failed"
            pending: WebEvent | None = None
            for ev in record(self.store, turn.id, steps):
                self.show(ev)
                if ev.type == "clarify":
                    pending = ev
                if ev.type == "done":
                    status = ev.data.get("status", "failed")
            if status != "awaiting_clarification" or pending is None:
                return status
            answer = self._ask_clarification(pending)
            if answer is None:
                self.console.print("[yellow]no answer: the run stays paused[/]")
                return status
            if not self.store.claim_turn(turn.id):  # the run is the store's to resume: answered elsewhere meanwhile
                self.console.print("[yellow]this question was answered elsewhere meanwhile[/]")
                return status
            steps = self.flow.resume(answer, thread_id=tid, question=question)

    def _ask_clarification(self, ev: WebEvent) -> str | None:
        options = ev.data.get("options") or []
        while True:
            raw = self._line("your answer (number or words)> ")
            if raw is None:
                return None
            raw = raw.strip()
            if raw.isdigit() and 1 <= int(raw) <= len(options):
                return options[int(raw) - 1]
            if raw:
                return raw

    # output ----------------------------------------------------------------------------------
    def show(self, ev: WebEvent) -> None:
        c = self.console
        d = ev.data
        if ev.type == "start":
            c.print(Text("working…", style="dim"))
        elif ev.type == "plan":
            c.print(Text("plan:", style="bold magenta"))
            text = d.get("text")
            if isinstance(text, str) and text:
                c.print(Text(_indent(text), style="magenta"))
        elif ev.type == "node_start":
            c.print(Text(f"▶ {ev.node_id} {ev.message}", style="cyan"))
        elif ev.type == "node_end" and ev.tree is not None and ev.node_id in ev.tree.nodes:
            node = ev.tree.nodes[ev.node_id]
            summary = (node.error or node.summary).splitlines()
            tail = f" — {summary[0][:140]}" if summary else ""
            style = "red" if node.status in ("failed", "refuted") else "green"
            c.print(Text(f"  {STATUS_MARK[node.status]} {ev.node_id} {ev.message}{tail}", style=style))
        elif ev.type == "candidate":
            c.print(Text(f"  candidate at {ev.node_id}: {ev.message}", style="yellow"))
        elif ev.type == "note":
            c.print(Text(f"  note: {ev.message}", style="dim"))
        elif ev.type == "clarify":
            c.print(
                Panel(Text(d.get("question") or ev.message), title="the copilot asks", border_style="yellow"),
                soft_wrap=False,
            )
            for i, o in enumerate(d.get("options") or [], 1):
                c.print(f"  [bold]{i}[/]. {o}", highlight=False)
        elif ev.type == "reply":
            c.print(Text(f"you answered: {ev.message}", style="dim"))
        elif ev.type == "final":
            sql = d.get("final_sql")
            if sql:
                c.print(
                    Panel(Syntax(sql, "sql", word_wrap=True, theme="ansi_dark"), title="SQL", border_style="blue"),
                    soft_wrap=False,
                )
            verdict = "best effort: nothing confirmed it (see the notes)" if d.get("best_effort") else d.get("verdict")
            if verdict:
                c.print(Text(str(verdict), style="dim"))
            for n in (d.get("notes") or [])[:8]:  # why the run ended as it did, e.g. other readings left standing
                c.print(Text(f"  note: {n}", style="dim"))
        elif ev.type == "result":
            self._table(ResultView.model_validate(d.get("result") or {}))
        elif ev.type == "answer":
            c.print(Text(ev.message, style="bold"))
        elif ev.type == "error":
            c.print(Text(f"✗ {ev.message}", style="bold red"))
        elif ev.type == "done":
            status = d.get("status")
            if status == "awaiting_clarification":
                c.print(Text("waiting for your answer", style="yellow"))

    def _table(self, view: ResultView) -> None:
        c = self.console
        if view.columns:
            c.print(rows_table(view.columns, view.rows, max_rows=self.max_rows))
        more = f" ({view.note})" if view.note else ""
        ms = f" in {view.elapsed_ms:.0f} ms" if view.elapsed_ms is not None else ""
        c.print(Text(f"{view.row_count} row(s){more}{ms}", style="green"))


def _indent(text: str) -> str:
    return "\n".join("  " + ln for ln in text.splitlines())
