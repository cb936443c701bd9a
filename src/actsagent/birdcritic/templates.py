"""One template database per ``db_id``, built from ``databases/sample_pg/<db_id>.sql``.

Templates live on the embedded PostgreSQL (or the server of ``DATABASE_URL``) and are reused
across runs: a comment on the database records the hash of the script it was built from.
Tasks whose database or extensions are missing are reported ``unsupported``, never guessed.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import psycopg
from psycopg import sql as pgsql
from pydantic import BaseModel

from actsagent.birdcritic.tasks import data_dir

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
    "pgcrypto": re.compile(r"\b(crypt|gen_salt|pgp_sym_encrypt|pgp_sym_decrypt|digest|hmac|gen_random_bytes)\s*\(",
                           re.I),
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


def admin_url() -> str:
    """The maintenance database of the server in use: DATABASE_URL's server, else the embedded one."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return with_dbname(url, "postgres")
    from actsagent.db import embedded

    return embedded.server_url("postgres")


def with_dbname(url: str, dbname: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = dbname
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})


def available_extensions(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM pg_available_extensions")}


def needed_extensions(texts: list[str]) -> set[str]:
    """Extensions (and build features such as ``xml``) a task's SQL or tests rely on."""
    blob = "\n".join(texts)
    need = {ext for ext, pat in _NEEDS.items() if pat.search(blob)}
    need |= {m.group(1).lower() for m in _CREATE_EXT.finditer(blob)}
    need |= {feat for feat, pat in _FEATURES.items() if pat.search(blob)}
    return need - {"plpgsql"}


def server_capabilities(url: str) -> set[str]:
    """Installable extensions plus build features (``xml`` when the server has libxml)."""
    caps = available_extensions(url) | {"plpgsql"}
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute("SELECT xmlparse(content '<a/>')")
            caps.add("xml")
        except psycopg.Error:
            pass
    return caps


def sample_script(db_id: str, root: Path | None = None) -> Path:
    return (root or data_dir()) / "databases" / "sample_pg" / f"{db_id}.sql"


def ensure_template(db_id: str, *, admin: str | None = None, root: Path | None = None,
                    rebuild: bool = False) -> TemplateInfo:
    """Build (or reuse) the template for ``db_id``; never raises for a missing database."""
    admin = admin or admin_url()
    name = template_dbname(db_id)
    script = sample_script(db_id, root)
    if not script.is_file():
        return TemplateInfo(db_id=db_id, dbname=name, ok=False, reason=f"no sample database for {db_id!r}")
    have = available_extensions(admin)
    exts = [e for e in ("hstore", "citext", "postgis") if e in have]
    text = script.read_text(encoding="utf-8")
    digest = hashlib.sha256((text + "|" + ",".join(exts)).encode()).hexdigest()[:16]
    stamp = f"{MARKER} {digest}"
    url = with_dbname(admin, name)
    with psycopg.connect(admin, autocommit=True) as conn:
        # Two runs may start together: one builds, the other waits and then reuses.
        conn.execute("SELECT pg_advisory_lock(hashtext(%s))", [name])
        try:
            row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                               [name]).fetchone()
            if row is not None and row[0] == stamp and not rebuild:
                return TemplateInfo(db_id=db_id, dbname=name, url=url, ok=True, extensions=exts,
                                    skipped_extensions=_skipped(text, have))
            if row is not None:
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name])
                conn.execute(pgsql.SQL("DROP DATABASE {}").format(pgsql.Identifier(name)))
            conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
            skipped = _skipped(text, have)
            body = _strip_unavailable(text, have)
            try:
                with psycopg.connect(url, autocommit=True) as tconn:
                    for schema in EXTRA_SCHEMAS:
                        tconn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(schema)))
                    if "postgis" in have:
                        tconn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
                    tconn.execute(body.encode("utf-8"))  # simple protocol: the whole script at once
            except psycopg.Error as e:
                conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {}").format(pgsql.Identifier(name)))
                return TemplateInfo(db_id=db_id, dbname=name, ok=False,
                                    reason=f"loading {script.name} failed: {e.diag.message_primary or e}")
            conn.execute(pgsql.SQL("COMMENT ON DATABASE {} IS {}").format(pgsql.Identifier(name),
                                                                           pgsql.Literal(stamp)))
            return TemplateInfo(db_id=db_id, dbname=name, url=url, ok=True, extensions=exts, skipped_extensions=skipped)
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [name])


_EXT_LINE = re.compile(r"^\s*CREATE\s+EXTENSION\s+IF\s+NOT\s+EXISTS\s+(\w+)\s*;\s*$", re.I | re.M)


def _skipped(text: str, have: set[str]) -> list[str]:
    return [m.group(1) for m in _EXT_LINE.finditer(text) if m.group(1).lower() not in have]


def _strip_unavailable(text: str, have: set[str]) -> str:
    return _EXT_LINE.sub(lambda m: m.group(0) if m.group(1).lower() in have else "", text)


def ensure_templates(db_ids: list[str], *, admin: str | None = None, root: Path | None = None,
                     rebuild: bool = False) -> dict[str, TemplateInfo]:
    admin = admin or admin_url()
    return {d: ensure_template(d, admin=admin, root=root, rebuild=rebuild) for d in sorted(set(db_ids))}
