"""Which functions generated SQL may call.

Lists reviewed by hand:

* ``DENIED`` (exact names) and ``DENIED_PREFIXES``: functions that sleep, lock, change settings,
  signal other sessions, touch server files or large objects, open remote connections, write
  (sequences, NOTIFY, transaction ids), leak credentials, settings or other sessions' queries, or
  run a query handed to them as text (which would bypass this guard). A denied name is refused in
  every form: called, in attribute notation (``(x).f`` and ``t.f`` run ``f(x)`` on PostgreSQL), and
  even if a policy allows it by name.
* ``ALLOWED[dialect]``: every function a query may call, checked to be read-only and cheap in
  arguments. A call is decided by the name the server will call, whatever node type sqlglot gives
  it: a name sqlglot models from another dialect (SECRET, READ_CSV, ...) is not reviewed and is refused.
* ``SYNTAX``: words followed by ``(`` that are grammar, not calls (``IN (``, ``FILTER (``, ``CAST(``).
* ``SAFE_SETTINGS``: the settings ``current_setting`` may read (a literal name only).

Everything here is lower case; lookups lower-case the called name.
"""

from __future__ import annotations

import functools

# -- refused, with the reason an LLM gets back --------------------------------------------------

_SLEEP_OR_LOCK = "it sleeps or takes locks and can stall the server"
_SETTINGS = "it changes session or server settings"
_SERVER_ADMIN = "it is a server administration function"
_SIGNALS = "it signals or terminates other sessions"
_FILES = "it reads or writes files on the database server"
_LARGE_OBJECTS = "it reads or writes large objects (server-side files)"
_REMOTE = "it opens connections to other databases"
_WRITES = "it writes (sequences, notifications or catalogs)"
_QUERY_TEXT = "it runs a query passed as text, which bypasses the guard"
_XID = "it assigns a transaction id (a write)"
_SECRETS = "it exposes credentials, server configuration or other sessions' queries"
_SQLITE = "it loads code or touches files from SQLite"

DENIED: dict[str, str] = {
    # sleeping, advisory locks
    "pg_sleep": _SLEEP_OR_LOCK, "pg_sleep_for": _SLEEP_OR_LOCK, "pg_sleep_until": _SLEEP_OR_LOCK,
    "pg_advisory_lock": _SLEEP_OR_LOCK, "pg_advisory_lock_shared": _SLEEP_OR_LOCK,
    "pg_advisory_unlock": _SLEEP_OR_LOCK, "pg_advisory_unlock_shared": _SLEEP_OR_LOCK,
    "pg_advisory_unlock_all": _SLEEP_OR_LOCK, "pg_advisory_xact_lock": _SLEEP_OR_LOCK,
    "pg_advisory_xact_lock_shared": _SLEEP_OR_LOCK, "pg_try_advisory_lock": _SLEEP_OR_LOCK,
    "pg_try_advisory_lock_shared": _SLEEP_OR_LOCK, "pg_try_advisory_xact_lock": _SLEEP_OR_LOCK,
    "pg_try_advisory_xact_lock_shared": _SLEEP_OR_LOCK,
    # settings (current_setting only reads and stays allowed)
    "set_config": _SETTINGS, "pg_reload_conf": _SETTINGS,
    # server administration
    "pg_rotate_logfile": _SERVER_ADMIN, "pg_rotate_logfile_old": _SERVER_ADMIN, "pg_promote": _SERVER_ADMIN,
    "pg_switch_wal": _SERVER_ADMIN, "pg_switch_xlog": _SERVER_ADMIN, "pg_create_restore_point": _SERVER_ADMIN,
    "pg_backup_start": _SERVER_ADMIN, "pg_backup_stop": _SERVER_ADMIN, "pg_start_backup": _SERVER_ADMIN,
    "pg_stop_backup": _SERVER_ADMIN, "pg_wal_replay_pause": _SERVER_ADMIN, "pg_wal_replay_resume": _SERVER_ADMIN,
    "pg_log_backend_memory_contexts": _SERVER_ADMIN, "pg_import_system_collations": _SERVER_ADMIN,
    "pg_export_snapshot": _SERVER_ADMIN, "pg_stat_clear_snapshot": _SERVER_ADMIN,
    "pg_stat_force_next_flush": _SERVER_ADMIN, "pg_stat_statements_reset": _SERVER_ADMIN,
    "pg_create_physical_replication_slot": _SERVER_ADMIN, "pg_create_logical_replication_slot": _SERVER_ADMIN,
    "pg_drop_replication_slot": _SERVER_ADMIN, "pg_copy_physical_replication_slot": _SERVER_ADMIN,
    "pg_copy_logical_replication_slot": _SERVER_ADMIN, "pg_replication_slot_advance": _SERVER_ADMIN,
    "pg_prewarm": _SERVER_ADMIN, "pg_truncate_visibility_map": _SERVER_ADMIN,
    "brin_summarize_new_values": _SERVER_ADMIN, "brin_summarize_range": _SERVER_ADMIN,
    "brin_desummarize_range": _SERVER_ADMIN, "gin_clean_pending_list": _SERVER_ADMIN,
    # other sessions
    "pg_terminate_backend": _SIGNALS, "pg_cancel_backend": _SIGNALS, "pg_signal_backend": _SIGNALS,
    # server files
    "pg_read_file": _FILES, "pg_read_binary_file": _FILES, "pg_ls_dir": _FILES, "pg_stat_file": _FILES,
    "pg_ls_logdir": _FILES, "pg_ls_waldir": _FILES, "pg_ls_tmpdir": _FILES, "pg_ls_archive_statusdir": _FILES,
    "pg_ls_logicalsnapdir": _FILES, "pg_ls_logicalmapdir": _FILES, "pg_ls_replslotdir": _FILES,
    "pg_ls_summariesdir": _FILES, "pg_current_logfile": _FILES, "pg_file_write": _FILES, "pg_file_rename": _FILES,
    "pg_file_unlink": _FILES, "pg_file_sync": _FILES, "pg_logdir_ls": _FILES,
    # large objects (also refused by prefix lo_)
    "lo_import": _LARGE_OBJECTS, "lo_export": _LARGE_OBJECTS, "lo_create": _LARGE_OBJECTS,
    "lo_creat": _LARGE_OBJECTS, "lo_unlink": _LARGE_OBJECTS, "lo_open": _LARGE_OBJECTS, "lo_close": _LARGE_OBJECTS,
    "lo_put": _LARGE_OBJECTS, "lo_get": _LARGE_OBJECTS, "lo_from_bytea": _LARGE_OBJECTS,
    "lo_truncate": _LARGE_OBJECTS, "lo_lseek": _LARGE_OBJECTS, "lo_tell": _LARGE_OBJECTS,
    "loread": _LARGE_OBJECTS, "lowrite": _LARGE_OBJECTS,
    # remote connections (also refused by prefix dblink)
    "dblink": _REMOTE, "dblink_exec": _REMOTE, "dblink_connect": _REMOTE, "dblink_connect_u": _REMOTE,
    "dblink_send_query": _REMOTE, "dblink_get_result": _REMOTE, "dblink_open": _REMOTE, "dblink_fetch": _REMOTE,
    "postgres_fdw_disconnect": _REMOTE, "postgres_fdw_disconnect_all": _REMOTE,
    # writes
    "nextval": _WRITES, "setval": _WRITES, "pg_notify": _WRITES, "pg_logical_emit_message": _WRITES,
    "pg_replication_origin_create": _WRITES, "pg_replication_origin_drop": _WRITES,
    "pg_replication_origin_advance": _WRITES, "pg_replication_origin_session_setup": _WRITES,
    "pg_logical_slot_get_changes": _WRITES, "pg_logical_slot_peek_changes": _WRITES,
    "pg_logical_slot_get_binary_changes": _WRITES, "pg_nextoid": _WRITES, "pg_extension_config_dump": _WRITES,
    "txid_current": _XID, "pg_current_xact_id": _XID,
    # leaks (their views are refused too: see DENIED_RELATIONS)
    "pg_stat_get_activity": _SECRETS, "pg_show_all_settings": _SECRETS, "pg_show_all_file_settings": _SECRETS,
    "pg_hba_file_rules": _SECRETS, "pg_ident_file_mappings": _SECRETS, "pg_config": _SECRETS,
    "pg_get_replication_slots": _SECRETS, "pg_stat_get_wal_receiver": _SECRETS,
    "pg_stat_get_subscription": _SECRETS, "pg_tablespace_location": _SECRETS,
    "pg_log_standby_snapshot": _SERVER_ADMIN, "pg_sync_replication_slots": _SERVER_ADMIN,
    # query text executed inside the function
    "query_to_xml": _QUERY_TEXT, "query_to_xmlschema": _QUERY_TEXT, "query_to_xml_and_xmlschema": _QUERY_TEXT,
    "cursor_to_xml": _QUERY_TEXT, "cursor_to_xmlschema": _QUERY_TEXT, "table_to_xml": _QUERY_TEXT,
    "table_to_xml_and_xmlschema": _QUERY_TEXT, "schema_to_xml": _QUERY_TEXT,
    "schema_to_xml_and_xmlschema": _QUERY_TEXT, "database_to_xml": _QUERY_TEXT,
    "database_to_xml_and_xmlschema": _QUERY_TEXT, "ts_stat": _QUERY_TEXT, "ts_rewrite": _QUERY_TEXT,
    "crosstab": _QUERY_TEXT, "crosstab2": _QUERY_TEXT, "crosstab3": _QUERY_TEXT, "crosstab4": _QUERY_TEXT,
    "connectby": _QUERY_TEXT,
    # SQLite
    "load_extension": _SQLITE, "readfile": _SQLITE, "writefile": _SQLITE, "edit": _SQLITE,
    "fts3_tokenizer": _SQLITE, "zipfile": _SQLITE, "sqlite_dbpage": _SQLITE,
}

DENIED_PREFIXES: dict[str, str] = {
    "pg_sleep": _SLEEP_OR_LOCK, "pg_advisory": _SLEEP_OR_LOCK, "pg_try_advisory": _SLEEP_OR_LOCK,
    "lo_": _LARGE_OBJECTS, "dblink": _REMOTE, "pg_logical_": _WRITES, "pg_replication_origin": _WRITES,
    "pg_ls_": _FILES, "pg_read_": _FILES, "pg_file_": _FILES, "pg_stat_reset": _SERVER_ADMIN,
    "pg_wal_replay": _SERVER_ADMIN, "binary_upgrade_": _SERVER_ADMIN, "pg_create_": _SERVER_ADMIN,
    "pg_drop_": _SERVER_ADMIN, "query_to_xml": _QUERY_TEXT, "crosstab": _QUERY_TEXT,
    "pg_stat_get_backend_": _SECRETS, "pg_stat_statements": _SECRETS,
}


@functools.lru_cache(maxsize=8192)
def denied_reason(name: str) -> str | None:
    """Why ``name`` is refused, or None."""
    n = name.lower()
    if n in DENIED:
        return DENIED[n]
    for prefix, why in DENIED_PREFIXES.items():
        if n.startswith(prefix):
            return why
    return None


# -- reviewed, read-only functions -------------------------------------------------------------

_COMMON = {
    # string
    "btrim", "ltrim", "rtrim", "lpad", "rpad", "split_part", "strpos", "translate", "reverse", "initcap",
    "chr", "ascii", "concat_ws", "left", "right", "repeat", "replace", "overlay", "quote_ident",
    "quote_literal", "quote_nullable", "starts_with", "to_hex", "md5", "sha224", "sha256", "sha384", "sha512",
    "encode", "decode", "bit_length", "octet_length", "char_length", "character_length", "length", "lower",
    "upper", "substr", "substring", "position", "trim", "format", "regexp_match", "regexp_matches",
    "regexp_split_to_array", "regexp_split_to_table", "regexp_count", "regexp_instr", "regexp_substr",
    "regexp_like", "string_to_array", "string_to_table", "unistr", "normalize", "casefold",
    # numbers
    "abs", "sign", "mod", "div", "power", "pow", "sqrt", "cbrt", "exp", "ln", "log", "log10", "pi", "round",
    "trunc", "ceil", "ceiling", "floor", "degrees", "radians", "sin", "cos", "tan", "asin", "acos", "atan",
    "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cot", "gcd", "lcm", "factorial",
    "width_bucket", "scale", "min_scale", "trim_scale", "random", "random_normal", "erf", "erfc",
    "to_number", "num_nonnulls", "num_nulls",
    # dates
    "to_char", "to_date", "to_timestamp", "date_part", "date_trunc", "date_bin", "age", "justify_days",
    "justify_hours", "justify_interval", "make_date", "make_time", "make_timestamp", "make_timestamptz",
    "make_interval", "isfinite", "clock_timestamp", "statement_timestamp", "transaction_timestamp",
    "timeofday", "now", "extract", "date_add", "date_subtract",
    # aggregates and windows
    "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg",
    "bool_and", "bool_or", "every", "bit_and", "bit_or", "bit_xor", "stddev", "stddev_pop", "stddev_samp",
    "variance", "var_pop", "var_samp", "corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy",
    "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy",
    "percentile_cont", "percentile_disc", "mode", "any_value", "row_number", "rank", "dense_rank",
    "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
    # arrays
    "array_length", "array_position", "array_positions", "array_to_string", "array_remove", "array_replace",
    "array_append", "array_prepend", "array_cat", "array_dims", "array_ndims", "array_upper", "array_lower",
    "cardinality", "unnest", "array_sample", "array_shuffle", "trim_array", "generate_series",
    "generate_subscripts",
    # json
    "to_json", "to_jsonb", "row_to_json", "array_to_json", "json_build_object", "jsonb_build_object",
    "json_build_array", "jsonb_build_array", "json_object", "jsonb_object", "json_extract_path",
    "jsonb_extract_path", "json_extract_path_text", "jsonb_extract_path_text", "json_array_elements",
    "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text", "json_array_length",
    "jsonb_array_length", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text", "json_object_keys",
    "jsonb_object_keys", "json_typeof", "jsonb_typeof", "json_strip_nulls", "jsonb_strip_nulls", "jsonb_pretty",
    "jsonb_set", "jsonb_set_lax", "jsonb_insert", "jsonb_path_exists", "jsonb_path_match", "jsonb_path_query",
    "jsonb_path_query_array", "jsonb_path_query_first", "json_populate_record", "jsonb_populate_record",
    "json_to_record", "jsonb_to_record", "json_to_recordset", "jsonb_to_recordset",
    # conditional and misc
    "coalesce", "nullif", "greatest", "least", "current_setting", "current_database", "current_schema",
    "current_schemas", "current_user", "session_user", "current_role", "user", "version", "pg_typeof",
    "format_type", "col_description", "obj_description", "shobj_description", "pg_get_viewdef",
    "pg_get_constraintdef", "pg_get_indexdef", "pg_get_expr", "pg_get_userbyid", "pg_table_size",
    "pg_relation_size", "pg_total_relation_size", "pg_indexes_size", "pg_database_size", "pg_size_pretty",
    "pg_column_size", "has_table_privilege", "has_column_privilege", "has_schema_privilege",
    "has_function_privilege", "txid_current_if_assigned", "pg_current_xact_id_if_assigned", "inet_client_addr",
    "gen_random_uuid", "uuid_generate_v4",
    # full-text search (query text is *not* executed by these)
    "to_tsvector", "to_tsquery", "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery", "ts_rank",
    "ts_rank_cd", "ts_headline", "setweight", "strip", "numnode", "querytree", "tsvector_to_array",
    "array_to_tsvector",
    # pg_trgm and pgvector
    "similarity", "word_similarity", "strict_word_similarity", "show_trgm", "l2_distance", "l1_distance",
    "cosine_distance", "inner_product", "vector_dims", "vector_norm", "l2_normalize", "binary_quantize",
    "subvector", "hamming_distance", "jaccard_distance",
    # geometry and network (operators' function forms)
    "area", "center", "diameter", "height", "width", "point", "box", "circle", "host", "masklen", "network",
    "family", "abbrev", "broadcast", "netmask", "hostmask", "inet_same_family", "inet_merge",
    # range functions
    "lower_inc", "upper_inc", "lower_inf", "upper_inf", "isempty", "range_merge", "int4range", "int8range",
    "numrange", "daterange", "tsrange", "tstzrange",
    # standard aggregates and functions sqlglot models as typed nodes
    "count", "sum", "avg", "min", "max", "grouping", "regexp_replace", "concat", "array_reverse", "array_sort",
    "get_bit", "jsonb_contains", "jsonb_exists",
    # type conversions named after their type (pg_proc names equal to a pg_catalog type name)
    "bit", "bool", "bpchar", "bytea", "char", "cidr", "date", "datemultirange", "float4", "float8", "int2", "int4",
    "int4multirange", "int8", "int8multirange", "interval", "line", "lseg", "macaddr", "macaddr8", "money", "name",
    "numeric", "nummultirange", "oid", "path", "pg_lsn", "polygon", "regclass", "text", "time", "timestamp",
    "timestamptz", "timetz", "tsmultirange", "tstzmultirange", "varbit", "varchar", "xid", "xml",
    # what PostgreSQL's grammar turns SQL syntax into (pg_catalog.extract for EXTRACT(... FROM ...), ...)
    "like_escape", "similar_to_escape", "timezone", "overlaps", "is_normalized", "pg_collation_for",
    "system_user", "xmlexists",
}

_SQLITE_ONLY = {
    # core scalar functions
    "abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif", "if", "instr",
    "last_insert_rowid", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif",
    "octet_length", "printf", "quote", "random", "randomblob", "replace", "round", "rtrim", "sign", "soundex",
    "sqlite_version", "substr", "substring", "trim", "typeof", "unhex", "unicode", "unlikely", "upper",
    "unistr", "zeroblob", "changes", "total_changes",
    # dates
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
    # aggregates and windows
    "avg", "count", "group_concat", "string_agg", "sum", "total", "median", "percentile", "percentile_cont",
    "percentile_disc", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag",
    "lead", "first_value", "last_value", "nth_value",
    # math
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees",
    "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh",
    "sqrt", "tan", "tanh", "trunc",
    # json1
    "json", "jsonb", "json_array", "json_array_length", "json_extract", "json_insert", "json_object",
    "json_patch", "json_remove", "json_replace", "json_set", "json_type", "json_valid", "json_quote",
    "json_group_array", "json_group_object", "json_each", "json_tree",
}

ALLOWED: dict[str, frozenset[str]] = {
    "postgres": frozenset(_COMMON),
    "sqlite": frozenset(_SQLITE_ONLY),
}

# Words a name check meets before "(" that are grammar, not a call: IN (, EXISTS(, WITHIN GROUP (, CAST(,
# VALUES (, ... For SQLite only words its parser never reads as a function name (checked against SQLite:
# "SELECT offset(1)" calls a function named offset). FILTER( and OVER( are grammar only right after a call's ")".
# A function sqlglot builds from one of these words (FILTER(x, y)) is still decided by the name written,
# and on PostgreSQL its own parser sees every real call.
_SQLITE_SYNTAX = frozenset({
    "all", "and", "as", "between", "case", "cast", "distinct", "else", "escape", "except", "exists", "from",
    "group", "having", "in", "intersect", "is", "join", "limit", "not", "on", "or", "select", "then", "to",
    "union", "using", "values", "when", "where",
})
SYNTAX: dict[str, frozenset[str]] = {
    "postgres": _SQLITE_SYNTAX | {
        "any", "array", "by", "cube", "for", "ilike", "lateral", "like", "materialized", "offset", "only",
        "partition", "placing", "recursive", "rollup", "row", "sets", "similar", "some", "with", "window", "within",
        "zone", "tablesample", "bernoulli", "system", "repeatable", "symmetric", "asymmetric"},
    "sqlite": _SQLITE_SYNTAX,
}
AFTER_CALL_SYNTAX = frozenset({"filter", "over"})

# Names sqlglot builds function nodes from that the dialect's grammar reads as syntax (ARRAY(SELECT ...) on
# PostgreSQL, where ARRAY is reserved): accepted as written, never as a name PostgreSQL's parser says is called.
WRITTEN_SYNTAX: dict[str, frozenset[str]] = {"postgres": frozenset({"array"}), "sqlite": frozenset()}

# current_setting() reads any setting, including data_directory, hba_file and config_file: only these
# (lower case, as PostgreSQL compares them) may be read, and only when named by a literal.
SAFE_SETTINGS = frozenset({
    "timezone", "datestyle", "intervalstyle", "search_path", "server_version", "server_version_num",
    "client_encoding", "server_encoding", "lc_collate", "lc_ctype", "lc_messages", "lc_monetary", "lc_numeric",
    "lc_time", "default_text_search_config", "standard_conforming_strings",
})
# Reviewed functions that are safe only with checked arguments: never reachable through attribute notation.
ARGUMENT_CHECKED = frozenset({"current_setting"})


@functools.cache
def known_function_names() -> frozenset[str]:
    """Every function name sqlglot models in any dialect, plus ours: a field ``(x).f`` named like one of
    these may be a call on PostgreSQL. Loads every sqlglot dialect once (about a second)."""
    from sqlglot.dialects.dialect import Dialect, Dialects

    names: set[str] = set(DENIED) | {n for names in ALLOWED.values() for n in names}
    for d in Dialects:
        if d.value:
            parser = Dialect.get_or_raise(d.value).parser_class
            names |= {k.lower() for k in (*parser.FUNCTIONS, *parser.FUNCTION_PARSERS)}
    return frozenset(names)
