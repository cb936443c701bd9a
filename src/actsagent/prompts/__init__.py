"""Prompt templates: ``src/actsagent/prompts/<name>.md`` files rendered into chat messages.

Template syntax
---------------
An optional front matter between two ``---`` lines at the very top holds ``key: value`` lines
(e.g. ``description: ...``); it is metadata, never sent to the model. The body is split into
messages by marker lines, each alone on its line::

    ---
    description: Repair a failing query from clause-level evidence.
    ---
    === system ===
    You repair {{ dialect }} SQL.
    === user ===
    Intent: {{ intent }}
    {% for e in errors %}- {{ e }}
    {% endfor %}

Markers are ``=== system ===``, ``=== user ===`` and ``=== assistant ===`` (a few-shot example
may repeat them). Text before the first marker, or a body without markers, is one user message.
Each section is a jinja2 template rendered with the keyword arguments of ``render``:
undefined variables are errors (StrictUndefined), ``tojson`` is available, blocks trim their
newlines, and ``{% include "_part.md" %}`` pulls in another file of this folder (names starting
with ``_`` are partials). Sections are split *before* rendering, so a variable whose value
contains a marker line (a user's issue text, say) can never start a new message. Sections that
render empty are dropped; surrounding whitespace is stripped.

Templates are read with importlib.resources, so they work from an installed wheel.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources

import jinja2

from actsagent.errors import UserError

__all__ = ["PromptTemplate", "load", "names", "parse", "render"]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_MARKER = re.compile(r"^===[ \t]*(system|user|assistant)[ \t]*===[ \t]*$", re.MULTILINE)
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)


class PromptTemplate:
    """A parsed template: metadata and (role, jinja source) sections."""

    def __init__(self, name: str, meta: dict[str, str], sections: list[tuple[str, str]]):
        self.name = name
        self.meta = meta
        self.sections = sections
        self._compiled: list[tuple[str, jinja2.Template]] | None = None

    @property
    def description(self) -> str:
        return self.meta.get("description", "")

    def compile(self) -> list[tuple[str, jinja2.Template]]:
        """Compile every section once; a syntax error names the template and line."""
        if self._compiled is None:
            try:
                self._compiled = [(role, _env().from_string(src)) for role, src in self.sections]
            except jinja2.TemplateSyntaxError as e:
                raise UserError(f"prompt {self.name!r}: template syntax error at line {e.lineno}: {e.message}") from e
        return self._compiled

    def render(self, **variables: object) -> list[dict]:
        out = []
        for role, template in self.compile():
            try:
                text = template.render(**variables)
            except jinja2.UndefinedError as e:
                raise UserError(f"prompt {self.name!r}: {e} (pass it to render())") from e
            text = text.strip()
            if text:
                out.append({"role": role, "content": text})
        return out


def _files():
    return resources.files(__name__)


def load(name: str) -> str:
    """The raw text of template ``name`` (without the .md suffix)."""
    if not _NAME.match(name):
        raise UserError(f"invalid prompt name {name!r}")
    file = _files() / f"{name}.md"
    if not file.is_file():
        raise UserError(f"no prompt template {name!r}; available: {', '.join(names()) or 'none'}")
    return file.read_text(encoding="utf-8")


def names() -> list[str]:
    """Names of the message templates (partials, starting with ``_``, excluded)."""
    return sorted(f.name[:-3] for f in _files().iterdir() if f.name.endswith(".md") and not f.name.startswith("_"))


def parse(name: str, text: str) -> PromptTemplate:
    """Split ``text`` into front matter and role sections (see the module docstring)."""
    meta: dict[str, str] = {}
    m = _FRONT.match(text)
    if m:
        for line in m.group(1).splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                key, sep, value = line.partition(":")
                if not sep:
                    raise UserError(f"prompt {name!r}: front matter line {line!r} is not 'key: value'")
                meta[key.strip()] = value.strip()
        text = text[m.end() :]
    sections: list[tuple[str, str]] = []
    pos, role = 0, "user"
    for mk in _MARKER.finditer(text):
        sections.append((role, text[pos : mk.start()]))
        role, pos = mk.group(1), mk.end()
    sections.append((role, text[pos:]))
    return PromptTemplate(name, meta, [(r, s) for r, s in sections if s.strip()])


@cache
def get(name: str) -> PromptTemplate:
    """The parsed template, cached for the process."""
    return parse(name, load(name))


def render(name: str, **variables: object) -> list[dict]:
    """Render template ``name`` into chat messages ``[{"role": ..., "content": ...}, ...]``."""
    return get(name).render(**variables)


def _load_partial(name: str) -> str:
    return load(name[:-3] if name.endswith(".md") else name)


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_partial),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
