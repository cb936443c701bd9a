"""System relations a query may not read, by schema.

A name is refused when written unqualified (the search path finds the system relation) or qualified
with its own schema; ``public.pg_settings`` is an application table and stays readable.
"""

from __future__ import annotations

_SECRETS = "it exposes credentials, server configuration or other sessions' queries"
_STATISTICS = "it exposes column statistics (most common values, histogram bounds) of every table, credentials included"
_FOREIGN = "it exposes user mappings or foreign server options (passwords, hosts)"

DENIED_RELATIONS: dict[str, dict[str, str]] = {
    "pg_catalog": {
        **{
            name: _SECRETS
            for name in (
                "pg_authid",
                "pg_shadow",
                "pg_user_mapping",
                "pg_user_mappings",
                "pg_hba_file_rules",
                "pg_ident_file_mappings",
                "pg_file_settings",
                "pg_settings",
                "pg_config",
                "pg_stat_activity",
                "pg_stat_statements",
                "pg_stat_statements_info",
                "pg_largeobject",
                "pg_largeobject_metadata",
                "pg_subscription",
                "pg_db_role_setting",
                "pg_replication_slots",
                "pg_stat_replication",
                "pg_stat_ssl",
                "pg_stat_gssapi",
                "pg_stat_wal_receiver",
                "pg_stat_subscription",
            )
        },
        **{
            name: _STATISTICS
            for name in (
                "pg_statistic",
                "pg_statistic_ext",
                "pg_statistic_ext_data",
                "pg_stats",
                "pg_stats_ext",
                "pg_stats_ext_exprs",
            )
        },
        **{name: _FOREIGN for name in ("pg_foreign_server", "pg_foreign_data_wrapper", "pg_foreign_table")},
    },
    "information_schema": {
        name: _FOREIGN
        for name in (
            "_pg_user_mappings",
            "user_mappings",
            "user_mapping_options",
            "_pg_foreign_servers",
            "foreign_servers",
            "foreign_server_options",
            "_pg_foreign_data_wrappers",
            "foreign_data_wrappers",
            "foreign_data_wrapper_options",
            "_pg_foreign_tables",
            "_pg_foreign_table_columns",
            "foreign_tables",
            "foreign_table_options",
        )
    },
}


def denied_relation(schema: str | None, name: str) -> str | None:
    """Why reading ``schema.name`` (``schema`` None or "" when unqualified) is refused, or None."""
    n, s = name.lower(), (schema or "").lower()
    for home, names in DENIED_RELATIONS.items():
        if n in names and s in ("", home):
            return names[n]
    return None
