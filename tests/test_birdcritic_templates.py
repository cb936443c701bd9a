"""Template databases and the detection of tasks this server cannot run."""

from __future__ import annotations

from actsagent.birdcritic.templates import ensure_template, needed_extensions, server_capabilities


def test_needed_extensions_from_task_text():
    assert needed_extensions(["SELECT first_value(bank) OVER w FROM trans"]) == set()  # not ST_ (PostGIS)
    assert needed_extensions(["SELECT ST_Distance(a, b)", "x::geography"]) == {"postgis"}
    assert needed_extensions(['CREATE EXTENSION IF NOT EXISTS "uuid-ossp";', "id uuid DEFAULT uuid_generate_v4()"]) == {
        "uuid-ossp"
    }
    assert needed_extensions(["SELECT * FROM crosstab('select 1')"]) == {"tablefunc"}
    assert needed_extensions(["SELECT xmlagg(xmlelement(name a, x)) FROM t"]) == {"xml"}
    assert needed_extensions(["CREATE EXTENSION plpgsql", "SELECT gen_random_uuid()"]) == set()  # core


def test_templates_are_built_once_and_missing_databases_are_unsupported(pg_admin_url):
    caps = server_capabilities(pg_admin_url)
    assert "vector" in caps and "hstore" not in caps  # the embedded server: no contrib
    first = ensure_template("debit_card_specializing", admin_url=pg_admin_url)
    assert first.ok and set(first.skipped_extensions) == {"hstore", "citext"}
    again = ensure_template("debit_card_specializing", admin_url=pg_admin_url)
    assert again.ok and again.url == first.url  # reused: the stamp matches
    missing = ensure_template("esophageal", admin_url=pg_admin_url)
    assert not missing.ok and "no sample database" in missing.reason
