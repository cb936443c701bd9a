-- dialect: postgres
SELECT pg_sleep(1)
-- ----
SELECT id FROM customers WHERE pg_sleep_for(id) IS NOT NULL
-- ----
SELECT * FROM customers WHERE id IN (SELECT pg_sleep_until(1))
-- ----
WITH x AS (SELECT pg_advisory_lock(1) AS v) SELECT v FROM x
-- ----
SELECT * FROM customers c, LATERAL (SELECT pg_advisory_lock_shared(c.id)) s
-- ----
SELECT * FROM pg_advisory_unlock(1) AS f
-- ----
SELECT CASE WHEN id > 0 THEN pg_advisory_unlock_shared(id) END FROM customers
-- ----
SELECT pg_catalog.pg_advisory_unlock_all(1)
-- ----
SELECT "pg_advisory_xact_lock"(1)
-- ----
SELECT coalesce(NULL, pg_advisory_xact_lock_shared(1))
-- ----
SELECT upper(CAST(pg_try_advisory_lock(1) AS text))
-- ----
SELECT 1 UNION ALL SELECT pg_try_advisory_lock_shared(1)
-- ----
SELECT count(*) FILTER (WHERE pg_try_advisory_xact_lock(id) IS NULL) FROM customers
-- ----
SELECT * FROM customers ORDER BY pg_try_advisory_xact_lock_shared(id)
-- ----
SELECT id FROM customers GROUP BY id HAVING set_config(1) IS NULL
-- ----
SELECT max(id) OVER (PARTITION BY pg_reload_conf(id)) FROM customers
-- ----
SELECT EXISTS (SELECT 1 FROM customers WHERE pg_rotate_logfile(1) IS NULL)
-- ----
SELECT * FROM customers JOIN orders ON pg_rotate_logfile_old(orders.id) IS NULL
-- ----
SELECT * FROM ROWS FROM (PG_PROMOTE(1)) AS r
-- ----
SELECT (SELECT pg_switch_wal(1)) AS v
-- ----
SELECT * FROM customers LIMIT (SELECT pg_switch_xlog(1))
-- ----
SELECT ARRAY[pg_create_restore_point(1)]
-- ----
SELECT * FROM customers WHERE name = 'a' OR PG_BACKUP_START(1) IS NULL
-- ----
SELECT id FROM customers INTERSECT SELECT pg_backup_stop(1)
-- ----
SELECT pg_start_backup(1)
-- ----
SELECT id FROM customers WHERE pg_stop_backup(id) IS NOT NULL
-- ----
SELECT * FROM customers WHERE id IN (SELECT pg_wal_replay_pause(1))
-- ----
WITH x AS (SELECT pg_wal_replay_resume(1) AS v) SELECT v FROM x
-- ----
SELECT * FROM customers c, LATERAL (SELECT pg_log_backend_memory_contexts(c.id)) s
-- ----
SELECT * FROM pg_import_system_collations(1) AS f
-- ----
SELECT CASE WHEN id > 0 THEN pg_export_snapshot(id) END FROM customers
-- ----
SELECT pg_catalog.pg_stat_clear_snapshot(1)
-- ----
SELECT "pg_stat_force_next_flush"(1)
-- ----
SELECT coalesce(NULL, pg_stat_statements_reset(1))
-- ----
SELECT upper(CAST(pg_create_physical_replication_slot(1) AS text))
-- ----
SELECT 1 UNION ALL SELECT pg_create_logical_replication_slot(1)
-- ----
SELECT count(*) FILTER (WHERE pg_drop_replication_slot(id) IS NULL) FROM customers
-- ----
SELECT * FROM customers ORDER BY pg_copy_physical_replication_slot(id)
-- ----
SELECT id FROM customers GROUP BY id HAVING pg_copy_logical_replication_slot(1) IS NULL
-- ----
SELECT max(id) OVER (PARTITION BY pg_replication_slot_advance(id)) FROM customers
-- ----
SELECT EXISTS (SELECT 1 FROM customers WHERE pg_prewarm(1) IS NULL)
-- ----
SELECT * FROM customers JOIN orders ON pg_truncate_visibility_map(orders.id) IS NULL
-- ----
SELECT * FROM ROWS FROM (BRIN_SUMMARIZE_NEW_VALUES(1)) AS r
-- ----
SELECT (SELECT brin_summarize_range(1)) AS v
-- ----
SELECT * FROM customers LIMIT (SELECT brin_desummarize_range(1))
-- ----
SELECT ARRAY[gin_clean_pending_list(1)]
-- ----
SELECT * FROM customers WHERE name = 'a' OR PG_TERMINATE_BACKEND(1) IS NULL
-- ----
SELECT id FROM customers INTERSECT SELECT pg_cancel_backend(1)
-- ----
SELECT pg_signal_backend(1)
-- ----
SELECT id FROM customers WHERE pg_read_file(id) IS NOT NULL
-- ----
SELECT * FROM customers WHERE id IN (SELECT pg_read_binary_file(1))
-- ----
WITH x AS (SELECT pg_ls_dir(1) AS v) SELECT v FROM x
-- ----
SELECT * FROM customers c, LATERAL (SELECT pg_stat_file(c.id)) s
-- ----
SELECT * FROM pg_ls_logdir(1) AS f
-- ----
SELECT CASE WHEN id > 0 THEN pg_ls_waldir(id) END FROM customers
-- ----
SELECT pg_catalog.pg_ls_tmpdir(1)
-- ----
SELECT "pg_ls_archive_statusdir"(1)
-- ----
SELECT coalesce(NULL, pg_ls_logicalsnapdir(1))
-- ----
SELECT upper(CAST(pg_ls_logicalmapdir(1) AS text))
-- ----
SELECT 1 UNION ALL SELECT pg_ls_replslotdir(1)
-- ----
SELECT count(*) FILTER (WHERE pg_ls_summariesdir(id) IS NULL) FROM customers
-- ----
SELECT * FROM customers ORDER BY pg_current_logfile(id)
-- ----
SELECT id FROM customers GROUP BY id HAVING pg_file_write(1) IS NULL
-- ----
SELECT max(id) OVER (PARTITION BY pg_file_rename(id)) FROM customers
-- ----
SELECT EXISTS (SELECT 1 FROM customers WHERE pg_file_unlink(1) IS NULL)
-- ----
SELECT * FROM customers JOIN orders ON pg_file_sync(orders.id) IS NULL
-- ----
SELECT * FROM ROWS FROM (PG_LOGDIR_LS(1)) AS r
-- ----
SELECT (SELECT lo_import(1)) AS v
-- ----
SELECT * FROM customers LIMIT (SELECT lo_export(1))
-- ----
SELECT ARRAY[lo_create(1)]
-- ----
SELECT * FROM customers WHERE name = 'a' OR LO_CREAT(1) IS NULL
-- ----
SELECT id FROM customers INTERSECT SELECT lo_unlink(1)
-- ----
SELECT lo_open(1)
-- ----
SELECT id FROM customers WHERE lo_close(id) IS NOT NULL
-- ----
SELECT * FROM customers WHERE id IN (SELECT lo_put(1))
-- ----
WITH x AS (SELECT lo_get(1) AS v) SELECT v FROM x
-- ----
SELECT * FROM customers c, LATERAL (SELECT lo_from_bytea(c.id)) s
-- ----
SELECT * FROM lo_truncate(1) AS f
-- ----
SELECT CASE WHEN id > 0 THEN lo_lseek(id) END FROM customers
-- ----
SELECT pg_catalog.lo_tell(1)
-- ----
SELECT "loread"(1)
-- ----
SELECT coalesce(NULL, lowrite(1))
-- ----
SELECT upper(CAST(dblink(1) AS text))
-- ----
SELECT 1 UNION ALL SELECT dblink_exec(1)
-- ----
SELECT count(*) FILTER (WHERE dblink_connect(id) IS NULL) FROM customers
-- ----
SELECT * FROM customers ORDER BY dblink_connect_u(id)
-- ----
SELECT id FROM customers GROUP BY id HAVING dblink_send_query(1) IS NULL
-- ----
SELECT max(id) OVER (PARTITION BY dblink_get_result(id)) FROM customers
-- ----
SELECT EXISTS (SELECT 1 FROM customers WHERE dblink_open(1) IS NULL)
-- ----
SELECT * FROM customers JOIN orders ON dblink_fetch(orders.id) IS NULL
-- ----
SELECT * FROM ROWS FROM (POSTGRES_FDW_DISCONNECT(1)) AS r
-- ----
SELECT (SELECT postgres_fdw_disconnect_all(1)) AS v
-- ----
SELECT * FROM customers LIMIT (SELECT nextval(1))
-- ----
SELECT ARRAY[setval(1)]
-- ----
SELECT * FROM customers WHERE name = 'a' OR PG_NOTIFY(1) IS NULL
-- ----
SELECT id FROM customers INTERSECT SELECT pg_logical_emit_message(1)
-- ----
SELECT pg_replication_origin_create(1)
-- ----
SELECT id FROM customers WHERE pg_replication_origin_drop(id) IS NOT NULL
-- ----
SELECT * FROM customers WHERE id IN (SELECT pg_replication_origin_advance(1))
-- ----
WITH x AS (SELECT pg_replication_origin_session_setup(1) AS v) SELECT v FROM x
-- ----
SELECT * FROM customers c, LATERAL (SELECT pg_logical_slot_get_changes(c.id)) s
-- ----
SELECT * FROM pg_logical_slot_peek_changes(1) AS f
-- ----
SELECT CASE WHEN id > 0 THEN pg_logical_slot_get_binary_changes(id) END FROM customers
-- ----
SELECT pg_catalog.pg_nextoid(1)
-- ----
SELECT "pg_extension_config_dump"(1)
-- ----
SELECT coalesce(NULL, query_to_xml(1))
-- ----
SELECT upper(CAST(query_to_xmlschema(1) AS text))
-- ----
SELECT 1 UNION ALL SELECT query_to_xml_and_xmlschema(1)
-- ----
SELECT count(*) FILTER (WHERE cursor_to_xml(id) IS NULL) FROM customers
-- ----
SELECT * FROM customers ORDER BY cursor_to_xmlschema(id)
-- ----
SELECT id FROM customers GROUP BY id HAVING table_to_xml(1) IS NULL
-- ----
SELECT max(id) OVER (PARTITION BY table_to_xml_and_xmlschema(id)) FROM customers
-- ----
SELECT EXISTS (SELECT 1 FROM customers WHERE schema_to_xml(1) IS NULL)
-- ----
SELECT * FROM customers JOIN orders ON schema_to_xml_and_xmlschema(orders.id) IS NULL
-- ----
SELECT * FROM ROWS FROM (DATABASE_TO_XML(1)) AS r
-- ----
SELECT (SELECT database_to_xml_and_xmlschema(1)) AS v
-- ----
SELECT * FROM customers LIMIT (SELECT ts_stat(1))
-- ----
SELECT ARRAY[ts_rewrite(1)]
-- ----
SELECT * FROM customers WHERE name = 'a' OR CROSSTAB(1) IS NULL
-- ----
SELECT id FROM customers INTERSECT SELECT crosstab2(1)
-- ----
SELECT crosstab3(1)
-- ----
SELECT id FROM customers WHERE crosstab4(id) IS NOT NULL
-- ----
SELECT * FROM customers WHERE id IN (SELECT connectby(1))
-- ----
WITH x AS (SELECT load_extension(1) AS v) SELECT v FROM x
-- ----
SELECT * FROM customers c, LATERAL (SELECT readfile(c.id)) s
-- ----
SELECT * FROM writefile(1) AS f
-- ----
SELECT CASE WHEN id > 0 THEN edit(id) END FROM customers
-- ----
SELECT pg_catalog.fts3_tokenizer(1)
-- ----
SELECT "zipfile"(1)
-- ----
SELECT coalesce(NULL, sqlite_dbpage(1))
-- ----
SELECT txid_current()
-- ----
SELECT id FROM customers WHERE pg_current_xact_id() IS NOT NULL
-- ----
SELECT * FROM pg_stat_get_activity(NULL) AS a
-- ----
SELECT (SELECT count(*) FROM pg_show_all_settings()) AS n
-- ----
SELECT name FROM customers UNION SELECT name FROM pg_show_all_file_settings()
-- ----
SELECT * FROM customers WHERE EXISTS (SELECT 1 FROM pg_hba_file_rules())
-- ----
SELECT coalesce(NULL, (SELECT map_user FROM pg_ident_file_mappings() LIMIT 1))
-- ----
WITH c AS (SELECT * FROM pg_config()) SELECT * FROM c
-- ----
SELECT "pg_get_replication_slots"()
-- ----
SELECT pg_catalog.pg_stat_get_wal_receiver()
-- ----
SELECT CASE WHEN id > 0 THEN (SELECT count(*) FROM pg_stat_get_subscription(NULL)) END FROM customers
-- ----
SELECT PG_TABLESPACE_LOCATION(oid) FROM pg_tablespace
-- ----
SELECT pg_log_standby_snapshot()
-- ----
SELECT id FROM customers ORDER BY pg_sync_replication_slots()
