"""One template database per ``db_id``, built from ``databases/sample_pg/<db_id>.sql``.

Templates live on the embedded PostgreSQL (or the server of ``DATABASE_URL``) and are reused
across runs: a comment on the database records the hash of the script it was built from.
Tasks whose database or extensions are missing are reported ``unsupported``, never guessed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel

from actsagent.birdcritic.tasks import data_dir
from actsagent.db import admin
from actsagent.errors import UserError

MARKER = "actsagent-birdcritic-template"
# Schemas the official environment provides in every database.
EXTRA_SCHEMAS = ("test_schema", "test_schema_2")

_NEEDS = {
    "hstore": re.compile(r"\bhstore\b", re.I),
    "citext": re.compile(r"\bcitext\b", re.I),
    "postgis": re.compile(r"\b(geometry|geography|postgis|ST_[A-Za-z]\w*)\b", re.I),
    # contrib extensions, recognised by their functions (the official image ships contrib)
    "uuid-ossp": re.compile(r"\buuid_generate_v\d", re.I),
    "tablefunc": re.compile(r"\b(crosstab\d*|connectby|normal_rand)\s*\(", re.I),
    "pgcrypto": re.compile(
        r"\b(crypt|gen_salt|pgp_sym_encrypt|pgp_sym_decrypt|digest|hmac|gen_random_bytes)\s*\(", re.I
    ),
    "pg_trgm": re.compile(r"\b((similarity|word_similarity|show_trgm)\s*\(|gin_trgm_ops|gist_trgm_ops)", re.I),
    "fuzzystrmatch": re.compile(r"\b(levenshtein|soundex|metaphone|dmetaphone|difference)\s*\(", re.I),
    "unaccent": re.compile(r"\bunaccent\s*\(", re.I),
    "earthdistance": re.compile(r"\b(ll_to_earth|earth_distance)\s*\(", re.I),
    "ltree": re.compile(r"\bltree\b", re.I),
    "intarray": re.compile(r"\bgin__int_ops\b", re.I),
}
_CREATE_EXT = re.compile(r"CREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?\"?([\w-]+)\"?", re.I)
# Server features that are build options rather than extensions.
_FEATURES = {"xml": re.compile(r"\b(xml\w*\s*\(|xpath\w*\s*\(|query_to_xml|table_to_xml)|::\s*xml\b", re.I)}


class TemplateInfo(BaseModel):
    db_id: str
    dbname: str
    url: str | None = None
    ok: bool
    reason: str | None = None
    skipped_extensions: list[str] = []
    extensions: list[str] = []


def template_dbname(db_id: str) -> str:
    return f"bc_{db_id}_template"


def needed_extensions(texts: list[str]) -> set[str]:
    """Extensions (and build features such as ``xml``) a task's SQL or tests rely on."""
    blob = "\n".join(texts)
    need = {ext for ext, pat in _NEEDS.items() if pat.search(blob)}
    need |= {m.group(1).lower() for m in _CREATE_EXT.finditer(blob)}
    need |= {feat for feat, pat in _FEATURES.items() if pat.search(blob)}
    return need - {"plpgsql"}


def server_capabilities(url: str) -> set[str]:
    """Installable extensions plus build features (``xml`` when the server has libxml)."""
    caps = admin.available_extensions(url) | {"plpgsql"}
    if admin.runs(url, "SELECT xmlparse(content '<a/>')"):
        caps.add("xml")
    return caps


def sample_script(db_id: str, root: Path | None = None) -> Path:
    return (root or data_dir()) / "databases" / "sample_pg" / f"{db_id}.sql"


def ensure_template(
    db_id: str, *, admin_url: str | None = None, root: Path | None = None, rebuild: bool = False
) -> TemplateInfo:
    """Build (or reuse) the template for ``db_id``; never raises for a missing database."""
    server = admin_url or admin.server_admin_url()
    name = template_dbname(db_id)
    script = sample_script(db_id, root)
    if not script.is_file():
        return TemplateInfo(db_id=db_id, dbname=name, ok=False, reason=f"no sample database for {db_id!r}")
    have = admin.available_extensions(server)
    exts: list[str] = [e for e in ("hstore", "citext", "postgis") if e in have]
    text = script.read_text(encoding="utf-8")
    digest = hashlib.sha256((text + "|" + ",".join(exts)).encode()).hexdigest()[:16]
    stamp = f"{MARKER} {digest}"
    url = admin.url_for(server, name)
    with admin.advisory_lock(server, name):  # two runs may start together: one builds, the other then reuses
        if not rebuild and admin.database_comment(server, name) == stamp:
            return TemplateInfo(
                db_id=db_id, dbname=name, url=url, ok=True, extensions=exts, skipped_extensions=_skipped(text, have)
            )
        admin.drop_database(server, name)
        admin.create_database(server, name)
        try:
            admin.run_script(
                url,
                _strip_unavailable(text, have),
                schemas=EXTRA_SCHEMAS,
                extensions=("postgis",) if "postgis" in have else (),
            )
        except UserError as e:
            admin.drop_database(server, name)
            return TemplateInfo(db_id=db_id, dbname=name, ok=False, reason=f"loading {script.name} failed: {e}")
        admin.comment_database(server, name, stamp)
        return TemplateInfo(
            db_id=db_id, dbname=name, url=url, ok=True, extensions=exts, skipped_extensions=_skipped(text, have)
        )


_EXT_LINE = re.compile(r"^\s*CREATE\s+EXTENSION\s+IF\s+NOT\s+EXISTS\s+(\w+)\s*;\s*$", re.I | re.M)


def _skipped(text: str, have: set[str]) -> list[str]:
    return [m.group(1) for m in _EXT_LINE.finditer(text) if m.group(1).lower() not in have]


def _strip_unavailable(text: str, have: set[str]) -> str:
    return _EXT_LINE.sub(lambda m: m.group(0) if m.group(1).lower() in have else "", text)


def ensure_templates(
    db_ids: list[str], *, admin_url: str | None = None, root: Path | None = None, rebuild: bool = False
) -> dict[str, TemplateInfo]:
    server = admin_url or admin.server_admin_url()
    return {d: ensure_template(d, admin_url=server, root=root, rebuild=rebuild) for d in sorted(set(db_ids))}
