"""Disposable copies of a PostgreSQL database, where any statement may run.

BIRD-CRITIC tasks include DDL and DML, so offline repair runs in a copy made with
``CREATE DATABASE ... TEMPLATE ...`` and dropped afterwards; the template is never touched.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from actsagent.config import Limits
from actsagent.db import admin
from actsagent.db.postgres import PostgresDatabase
from actsagent.errors import UserError


@contextmanager
def sandbox(
    template: PostgresDatabase | str, *, limits: Limits | None = None, name: str | None = None
) -> Iterator[PostgresDatabase]:
    """Yield a writable copy of ``template`` (a Database or a URL); drop it on exit.

    The copy is made and used as the administrator (``template.admin_url`` when the template's
    queries run as the read-only role). A template restricted by per-caller settings is refused:
    as the administrator the copy would show every tenant's rows.
    """
    if isinstance(template, PostgresDatabase):
        if template.settings:
            raise UserError(
                "a disposable copy runs as the administrator, which row-level security does not "
                "restrict; it is not available to a caller with per-caller settings"
            )
        url = template.admin_url or template.url
    else:
        url = template
    source = admin.dbname_of(url)
    copy = name or f"{source[:40]}_sbx_{uuid.uuid4().hex[:10]}"
    maintenance = admin.maintenance_url(url)
    try:
        admin.create_database(maintenance, copy, template=source)
    finally:
        if isinstance(template, PostgresDatabase):
            template.discard_broken_connections()  # its sessions were terminated for the copy
    db = PostgresDatabase(admin.url_for(url, copy), limits=limits, writable=True, single_statement=False)
    try:
        yield db
    finally:
        db.close()
        admin.drop_database(maintenance, copy)
