-- dialect: postgres
SELECT (1).pg_sleep
-- ----
SELECT (c.name).PG_SLEEP FROM customers c
-- ----
SELECT ('x'::text).pg_sleep_for
-- ----
SELECT id FROM customers c WHERE c.pg_sleep_for IS NOT NULL
-- ----
SELECT c.pg_sleep_until FROM customers c
-- ----
SELECT x.v.pg_sleep_until FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_advisory_lock FROM customers
-- ----
SELECT ((1)::int8).pg_advisory_lock
-- ----
SELECT c."pg_advisory_lock_shared" FROM customers c
-- ----
SELECT ("c").pg_advisory_lock_shared FROM customers AS "c"
-- ----
SELECT (c.name).PG_ADVISORY_UNLOCK FROM customers c
-- ----
SELECT (1).pg_advisory_unlock
-- ----
SELECT id FROM customers c WHERE c.pg_advisory_unlock_shared IS NOT NULL
-- ----
SELECT ('x'::text).pg_advisory_unlock_shared
-- ----
SELECT x.v.pg_advisory_unlock_all FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_advisory_unlock_all FROM customers c
-- ----
SELECT ((1)::int8).pg_advisory_xact_lock
-- ----
SELECT public.customers.pg_advisory_xact_lock FROM customers
-- ----
SELECT ("c").pg_advisory_xact_lock_shared FROM customers AS "c"
-- ----
SELECT c."pg_advisory_xact_lock_shared" FROM customers c
-- ----
SELECT (1).pg_try_advisory_lock
-- ----
SELECT (c.name).PG_TRY_ADVISORY_LOCK FROM customers c
-- ----
SELECT ('x'::text).pg_try_advisory_lock_shared
-- ----
SELECT id FROM customers c WHERE c.pg_try_advisory_lock_shared IS NOT NULL
-- ----
SELECT c.pg_try_advisory_xact_lock FROM customers c
-- ----
SELECT x.v.pg_try_advisory_xact_lock FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_try_advisory_xact_lock_shared FROM customers
-- ----
SELECT ((1)::int8).pg_try_advisory_xact_lock_shared
-- ----
SELECT c."set_config" FROM customers c
-- ----
SELECT ("c").set_config FROM customers AS "c"
-- ----
SELECT (c.name).PG_RELOAD_CONF FROM customers c
-- ----
SELECT (1).pg_reload_conf
-- ----
SELECT id FROM customers c WHERE c.pg_rotate_logfile IS NOT NULL
-- ----
SELECT ('x'::text).pg_rotate_logfile
-- ----
SELECT x.v.pg_rotate_logfile_old FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_rotate_logfile_old FROM customers c
-- ----
SELECT ((1)::int8).pg_promote
-- ----
SELECT public.customers.pg_promote FROM customers
-- ----
SELECT ("c").pg_switch_wal FROM customers AS "c"
-- ----
SELECT c."pg_switch_wal" FROM customers c
-- ----
SELECT (1).pg_switch_xlog
-- ----
SELECT (c.name).PG_SWITCH_XLOG FROM customers c
-- ----
SELECT ('x'::text).pg_create_restore_point
-- ----
SELECT id FROM customers c WHERE c.pg_create_restore_point IS NOT NULL
-- ----
SELECT c.pg_backup_start FROM customers c
-- ----
SELECT x.v.pg_backup_start FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_backup_stop FROM customers
-- ----
SELECT ((1)::int8).pg_backup_stop
-- ----
SELECT c."pg_start_backup" FROM customers c
-- ----
SELECT ("c").pg_start_backup FROM customers AS "c"
-- ----
SELECT (c.name).PG_STOP_BACKUP FROM customers c
-- ----
SELECT (1).pg_stop_backup
-- ----
SELECT id FROM customers c WHERE c.pg_wal_replay_pause IS NOT NULL
-- ----
SELECT ('x'::text).pg_wal_replay_pause
-- ----
SELECT x.v.pg_wal_replay_resume FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_wal_replay_resume FROM customers c
-- ----
SELECT ((1)::int8).pg_log_backend_memory_contexts
-- ----
SELECT public.customers.pg_log_backend_memory_contexts FROM customers
-- ----
SELECT ("c").pg_import_system_collations FROM customers AS "c"
-- ----
SELECT c."pg_import_system_collations" FROM customers c
-- ----
SELECT (1).pg_export_snapshot
-- ----
SELECT (c.name).PG_EXPORT_SNAPSHOT FROM customers c
-- ----
SELECT ('x'::text).pg_stat_clear_snapshot
-- ----
SELECT id FROM customers c WHERE c.pg_stat_clear_snapshot IS NOT NULL
-- ----
SELECT c.pg_stat_force_next_flush FROM customers c
-- ----
SELECT x.v.pg_stat_force_next_flush FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_stat_statements_reset FROM customers
-- ----
SELECT ((1)::int8).pg_stat_statements_reset
-- ----
SELECT c."pg_create_physical_replication_slot" FROM customers c
-- ----
SELECT ("c").pg_create_physical_replication_slot FROM customers AS "c"
-- ----
SELECT (c.name).PG_CREATE_LOGICAL_REPLICATION_SLOT FROM customers c
-- ----
SELECT (1).pg_create_logical_replication_slot
-- ----
SELECT id FROM customers c WHERE c.pg_drop_replication_slot IS NOT NULL
-- ----
SELECT ('x'::text).pg_drop_replication_slot
-- ----
SELECT x.v.pg_copy_physical_replication_slot FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_copy_physical_replication_slot FROM customers c
-- ----
SELECT ((1)::int8).pg_copy_logical_replication_slot
-- ----
SELECT public.customers.pg_copy_logical_replication_slot FROM customers
-- ----
SELECT ("c").pg_replication_slot_advance FROM customers AS "c"
-- ----
SELECT c."pg_replication_slot_advance" FROM customers c
-- ----
SELECT (1).pg_prewarm
-- ----
SELECT (c.name).PG_PREWARM FROM customers c
-- ----
SELECT ('x'::text).pg_truncate_visibility_map
-- ----
SELECT id FROM customers c WHERE c.pg_truncate_visibility_map IS NOT NULL
-- ----
SELECT c.brin_summarize_new_values FROM customers c
-- ----
SELECT x.v.brin_summarize_new_values FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.brin_summarize_range FROM customers
-- ----
SELECT ((1)::int8).brin_summarize_range
-- ----
SELECT c."brin_desummarize_range" FROM customers c
-- ----
SELECT ("c").brin_desummarize_range FROM customers AS "c"
-- ----
SELECT (c.name).GIN_CLEAN_PENDING_LIST FROM customers c
-- ----
SELECT (1).gin_clean_pending_list
-- ----
SELECT id FROM customers c WHERE c.pg_terminate_backend IS NOT NULL
-- ----
SELECT ('x'::text).pg_terminate_backend
-- ----
SELECT x.v.pg_cancel_backend FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_cancel_backend FROM customers c
-- ----
SELECT ((1)::int8).pg_signal_backend
-- ----
SELECT public.customers.pg_signal_backend FROM customers
-- ----
SELECT ("c").pg_read_file FROM customers AS "c"
-- ----
SELECT c."pg_read_file" FROM customers c
-- ----
SELECT (1).pg_read_binary_file
-- ----
SELECT (c.name).PG_READ_BINARY_FILE FROM customers c
-- ----
SELECT ('x'::text).pg_ls_dir
-- ----
SELECT id FROM customers c WHERE c.pg_ls_dir IS NOT NULL
-- ----
SELECT c.pg_stat_file FROM customers c
-- ----
SELECT x.v.pg_stat_file FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_ls_logdir FROM customers
-- ----
SELECT ((1)::int8).pg_ls_logdir
-- ----
SELECT c."pg_ls_waldir" FROM customers c
-- ----
SELECT ("c").pg_ls_waldir FROM customers AS "c"
-- ----
SELECT (c.name).PG_LS_TMPDIR FROM customers c
-- ----
SELECT (1).pg_ls_tmpdir
-- ----
SELECT id FROM customers c WHERE c.pg_ls_archive_statusdir IS NOT NULL
-- ----
SELECT ('x'::text).pg_ls_archive_statusdir
-- ----
SELECT x.v.pg_ls_logicalsnapdir FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_ls_logicalsnapdir FROM customers c
-- ----
SELECT ((1)::int8).pg_ls_logicalmapdir
-- ----
SELECT public.customers.pg_ls_logicalmapdir FROM customers
-- ----
SELECT ("c").pg_ls_replslotdir FROM customers AS "c"
-- ----
SELECT c."pg_ls_replslotdir" FROM customers c
-- ----
SELECT (1).pg_ls_summariesdir
-- ----
SELECT (c.name).PG_LS_SUMMARIESDIR FROM customers c
-- ----
SELECT ('x'::text).pg_current_logfile
-- ----
SELECT id FROM customers c WHERE c.pg_current_logfile IS NOT NULL
-- ----
SELECT c.pg_file_write FROM customers c
-- ----
SELECT x.v.pg_file_write FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_file_rename FROM customers
-- ----
SELECT ((1)::int8).pg_file_rename
-- ----
SELECT c."pg_file_unlink" FROM customers c
-- ----
SELECT ("c").pg_file_unlink FROM customers AS "c"
-- ----
SELECT (c.name).PG_FILE_SYNC FROM customers c
-- ----
SELECT (1).pg_file_sync
-- ----
SELECT id FROM customers c WHERE c.pg_logdir_ls IS NOT NULL
-- ----
SELECT ('x'::text).pg_logdir_ls
-- ----
SELECT x.v.lo_import FROM (SELECT 1 AS v) x
-- ----
SELECT c.lo_import FROM customers c
-- ----
SELECT ((1)::int8).lo_export
-- ----
SELECT public.customers.lo_export FROM customers
-- ----
SELECT ("c").lo_create FROM customers AS "c"
-- ----
SELECT c."lo_create" FROM customers c
-- ----
SELECT (1).lo_creat
-- ----
SELECT (c.name).LO_CREAT FROM customers c
-- ----
SELECT ('x'::text).lo_unlink
-- ----
SELECT id FROM customers c WHERE c.lo_unlink IS NOT NULL
-- ----
SELECT c.lo_open FROM customers c
-- ----
SELECT x.v.lo_open FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.lo_close FROM customers
-- ----
SELECT ((1)::int8).lo_close
-- ----
SELECT c."lo_put" FROM customers c
-- ----
SELECT ("c").lo_put FROM customers AS "c"
-- ----
SELECT (c.name).LO_GET FROM customers c
-- ----
SELECT (1).lo_get
-- ----
SELECT id FROM customers c WHERE c.lo_from_bytea IS NOT NULL
-- ----
SELECT ('x'::text).lo_from_bytea
-- ----
SELECT x.v.lo_truncate FROM (SELECT 1 AS v) x
-- ----
SELECT c.lo_truncate FROM customers c
-- ----
SELECT ((1)::int8).lo_lseek
-- ----
SELECT public.customers.lo_lseek FROM customers
-- ----
SELECT ("c").lo_tell FROM customers AS "c"
-- ----
SELECT c."lo_tell" FROM customers c
-- ----
SELECT (1).loread
-- ----
SELECT (c.name).LOREAD FROM customers c
-- ----
SELECT ('x'::text).lowrite
-- ----
SELECT id FROM customers c WHERE c.lowrite IS NOT NULL
-- ----
SELECT c.dblink FROM customers c
-- ----
SELECT x.v.dblink FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.dblink_exec FROM customers
-- ----
SELECT ((1)::int8).dblink_exec
-- ----
SELECT c."dblink_connect" FROM customers c
-- ----
SELECT ("c").dblink_connect FROM customers AS "c"
-- ----
SELECT (c.name).DBLINK_CONNECT_U FROM customers c
-- ----
SELECT (1).dblink_connect_u
-- ----
SELECT id FROM customers c WHERE c.dblink_send_query IS NOT NULL
-- ----
SELECT ('x'::text).dblink_send_query
-- ----
SELECT x.v.dblink_get_result FROM (SELECT 1 AS v) x
-- ----
SELECT c.dblink_get_result FROM customers c
-- ----
SELECT ((1)::int8).dblink_open
-- ----
SELECT public.customers.dblink_open FROM customers
-- ----
SELECT ("c").dblink_fetch FROM customers AS "c"
-- ----
SELECT c."dblink_fetch" FROM customers c
-- ----
SELECT (1).postgres_fdw_disconnect
-- ----
SELECT (c.name).POSTGRES_FDW_DISCONNECT FROM customers c
-- ----
SELECT ('x'::text).postgres_fdw_disconnect_all
-- ----
SELECT id FROM customers c WHERE c.postgres_fdw_disconnect_all IS NOT NULL
-- ----
SELECT c.nextval FROM customers c
-- ----
SELECT x.v.nextval FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.setval FROM customers
-- ----
SELECT ((1)::int8).setval
-- ----
SELECT c."pg_notify" FROM customers c
-- ----
SELECT ("c").pg_notify FROM customers AS "c"
-- ----
SELECT (c.name).PG_LOGICAL_EMIT_MESSAGE FROM customers c
-- ----
SELECT (1).pg_logical_emit_message
-- ----
SELECT id FROM customers c WHERE c.pg_replication_origin_create IS NOT NULL
-- ----
SELECT ('x'::text).pg_replication_origin_create
-- ----
SELECT x.v.pg_replication_origin_drop FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_replication_origin_drop FROM customers c
-- ----
SELECT ((1)::int8).pg_replication_origin_advance
-- ----
SELECT public.customers.pg_replication_origin_advance FROM customers
-- ----
SELECT ("c").pg_replication_origin_session_setup FROM customers AS "c"
-- ----
SELECT c."pg_replication_origin_session_setup" FROM customers c
-- ----
SELECT (1).pg_logical_slot_get_changes
-- ----
SELECT (c.name).PG_LOGICAL_SLOT_GET_CHANGES FROM customers c
-- ----
SELECT ('x'::text).pg_logical_slot_peek_changes
-- ----
SELECT id FROM customers c WHERE c.pg_logical_slot_peek_changes IS NOT NULL
-- ----
SELECT c.pg_logical_slot_get_binary_changes FROM customers c
-- ----
SELECT x.v.pg_logical_slot_get_binary_changes FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_nextoid FROM customers
-- ----
SELECT ((1)::int8).pg_nextoid
-- ----
SELECT c."pg_extension_config_dump" FROM customers c
-- ----
SELECT ("c").pg_extension_config_dump FROM customers AS "c"
-- ----
SELECT (c.name).TXID_CURRENT FROM customers c
-- ----
SELECT (1).txid_current
-- ----
SELECT id FROM customers c WHERE c.pg_current_xact_id IS NOT NULL
-- ----
SELECT ('x'::text).pg_current_xact_id
-- ----
SELECT x.v.pg_stat_get_activity FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_stat_get_activity FROM customers c
-- ----
SELECT ((1)::int8).pg_show_all_settings
-- ----
SELECT public.customers.pg_show_all_settings FROM customers
-- ----
SELECT ("c").pg_show_all_file_settings FROM customers AS "c"
-- ----
SELECT c."pg_show_all_file_settings" FROM customers c
-- ----
SELECT (1).pg_hba_file_rules
-- ----
SELECT (c.name).PG_HBA_FILE_RULES FROM customers c
-- ----
SELECT ('x'::text).pg_ident_file_mappings
-- ----
SELECT id FROM customers c WHERE c.pg_ident_file_mappings IS NOT NULL
-- ----
SELECT c.pg_config FROM customers c
-- ----
SELECT x.v.pg_config FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.pg_get_replication_slots FROM customers
-- ----
SELECT ((1)::int8).pg_get_replication_slots
-- ----
SELECT c."pg_stat_get_wal_receiver" FROM customers c
-- ----
SELECT ("c").pg_stat_get_wal_receiver FROM customers AS "c"
-- ----
SELECT (c.name).PG_STAT_GET_SUBSCRIPTION FROM customers c
-- ----
SELECT (1).pg_stat_get_subscription
-- ----
SELECT id FROM customers c WHERE c.pg_tablespace_location IS NOT NULL
-- ----
SELECT ('x'::text).pg_tablespace_location
-- ----
SELECT x.v.pg_log_standby_snapshot FROM (SELECT 1 AS v) x
-- ----
SELECT c.pg_log_standby_snapshot FROM customers c
-- ----
SELECT ((1)::int8).pg_sync_replication_slots
-- ----
SELECT public.customers.pg_sync_replication_slots FROM customers
-- ----
SELECT ("c").query_to_xml FROM customers AS "c"
-- ----
SELECT c."query_to_xml" FROM customers c
-- ----
SELECT (1).query_to_xmlschema
-- ----
SELECT (c.name).QUERY_TO_XMLSCHEMA FROM customers c
-- ----
SELECT ('x'::text).query_to_xml_and_xmlschema
-- ----
SELECT id FROM customers c WHERE c.query_to_xml_and_xmlschema IS NOT NULL
-- ----
SELECT c.cursor_to_xml FROM customers c
-- ----
SELECT x.v.cursor_to_xml FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.cursor_to_xmlschema FROM customers
-- ----
SELECT ((1)::int8).cursor_to_xmlschema
-- ----
SELECT c."table_to_xml" FROM customers c
-- ----
SELECT ("c").table_to_xml FROM customers AS "c"
-- ----
SELECT (c.name).TABLE_TO_XML_AND_XMLSCHEMA FROM customers c
-- ----
SELECT (1).table_to_xml_and_xmlschema
-- ----
SELECT id FROM customers c WHERE c.schema_to_xml IS NOT NULL
-- ----
SELECT ('x'::text).schema_to_xml
-- ----
SELECT x.v.schema_to_xml_and_xmlschema FROM (SELECT 1 AS v) x
-- ----
SELECT c.schema_to_xml_and_xmlschema FROM customers c
-- ----
SELECT ((1)::int8).database_to_xml
-- ----
SELECT public.customers.database_to_xml FROM customers
-- ----
SELECT ("c").database_to_xml_and_xmlschema FROM customers AS "c"
-- ----
SELECT c."database_to_xml_and_xmlschema" FROM customers c
-- ----
SELECT (1).ts_stat
-- ----
SELECT (c.name).TS_STAT FROM customers c
-- ----
SELECT ('x'::text).ts_rewrite
-- ----
SELECT id FROM customers c WHERE c.ts_rewrite IS NOT NULL
-- ----
SELECT c.crosstab FROM customers c
-- ----
SELECT x.v.crosstab FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.crosstab2 FROM customers
-- ----
SELECT ((1)::int8).crosstab2
-- ----
SELECT c."crosstab3" FROM customers c
-- ----
SELECT ("c").crosstab3 FROM customers AS "c"
-- ----
SELECT (c.name).CROSSTAB4 FROM customers c
-- ----
SELECT (1).crosstab4
-- ----
SELECT id FROM customers c WHERE c.connectby IS NOT NULL
-- ----
SELECT ('x'::text).connectby
-- ----
SELECT x.v.load_extension FROM (SELECT 1 AS v) x
-- ----
SELECT c.load_extension FROM customers c
-- ----
SELECT ((1)::int8).readfile
-- ----
SELECT public.customers.readfile FROM customers
-- ----
SELECT ("c").writefile FROM customers AS "c"
-- ----
SELECT c."writefile" FROM customers c
-- ----
SELECT (1).edit
-- ----
SELECT (c.name).EDIT FROM customers c
-- ----
SELECT ('x'::text).fts3_tokenizer
-- ----
SELECT id FROM customers c WHERE c.fts3_tokenizer IS NOT NULL
-- ----
SELECT c.zipfile FROM customers c
-- ----
SELECT x.v.zipfile FROM (SELECT 1 AS v) x
-- ----
SELECT public.customers.sqlite_dbpage FROM customers
-- ----
SELECT ((1)::int8).sqlite_dbpage
-- ----
SELECT (1).pg_stat_reset_shared
-- ----
SELECT ('x'::text).lo_whatever
-- ----
SELECT c.dblink_build_sql_insert FROM customers c
-- ----
SELECT public.customers.pg_ls_anything FROM customers
-- ----
SELECT ((1)::int8).pg_stat_get_backend_activity
-- ----
SELECT (c.name).PG_STAT_STATEMENTS_INFO FROM customers c
-- ----
SELECT id FROM customers c WHERE c.pg_read_anything IS NOT NULL
-- ----
SELECT x.v.pg_advisory_whatever FROM (SELECT 1 AS v) x
-- ----
SELECT ("c").crosstab_hash FROM customers AS "c"
-- ----
SELECT c."binary_upgrade_x" FROM customers c
-- ----
SELECT * FROM customers WHERE id = ANY(ARRAY[(3::float8).pg_sleep])
-- ----
SELECT count(*) FILTER (WHERE ((1)).pg_advisory_lock IS NOT NULL) FROM customers
-- ----
WITH s AS (SELECT ('/etc/hostname'::text).pg_read_file AS t) SELECT * FROM s
-- ----
SELECT name FROM customers ORDER BY (pg_backend_pid()).pg_terminate_backend
-- ----
SELECT (('select 1'::text)).ts_stat
-- ----
SELECT (SELECT (0.1::float8).pg_sleep)
-- ----
SELECT (x).set_config FROM (SELECT 'a'::text AS x) s
-- ----
SELECT ('data_directory'::text).current_setting
-- ----
SELECT (x.s).current_setting FROM (SELECT 'hba_file'::text AS s) x
-- ----
SELECT customers.PG_SLEEP FROM customers
-- ----
SELECT "public"."customers"."pg_sleep" FROM customers
-- ----
SELECT (1).pg_catalog.pg_sleep
