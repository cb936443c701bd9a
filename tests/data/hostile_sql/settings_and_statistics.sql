-- dialect: postgres
SELECT current_setting('data_directory')
-- ----
SELECT current_setting('hba_file')
-- ----
SELECT current_setting('config_file')
-- ----
SELECT current_setting('ident_file', true)
-- ----
SELECT current_setting('DATA_DIRECTORY')
-- ----
SELECT current_setting('data_' || 'directory')
-- ----
SELECT current_setting(setting_name => 'data_directory')
-- ----
SELECT current_setting(name) FROM customers
-- ----
SELECT pg_catalog.current_setting('hba_file')
-- ----
SELECT current_setting('TimeZone', 'hba_file')
-- ----
SELECT current_setting('ssl_key_file')
-- ----
SELECT current_setting('log_directory')
-- ----
SELECT current_setting('shared_preload_libraries')
-- ----
SELECT CURRENT_SETTING('Data_Directory')
-- ----
SELECT ('config_file'::text).current_setting
-- ----
SELECT * FROM pg_stats
-- ----
SELECT histogram_bounds FROM pg_stats WHERE tablename = 'pg_authid' AND attname = 'rolpassword'
-- ----
SELECT most_common_vals FROM pg_catalog.pg_stats
-- ----
SELECT * FROM pg_statistic
-- ----
SELECT stavalues1 FROM pg_catalog.pg_statistic
-- ----
SELECT * FROM pg_statistic_ext
-- ----
SELECT * FROM pg_statistic_ext_data
-- ----
SELECT * FROM pg_stats_ext
-- ----
SELECT * FROM pg_stats_ext_exprs
-- ----
SELECT * FROM "pg_catalog"."PG_STATS"
-- ----
SELECT s.* FROM customers c JOIN pg_stats s ON s.tablename = c.name
-- ----
WITH s AS (SELECT * FROM pg_statistic) SELECT count(*) FROM s
-- ----
SELECT * FROM information_schema._pg_user_mappings
-- ----
SELECT * FROM information_schema.user_mappings
-- ----
SELECT * FROM information_schema.user_mapping_options
-- ----
SELECT * FROM information_schema.foreign_server_options
-- ----
SELECT * FROM information_schema._pg_foreign_servers
-- ----
SELECT * FROM INFORMATION_SCHEMA.FOREIGN_TABLE_OPTIONS
-- ----
SELECT * FROM "information_schema"."_pg_user_mappings"
-- ----
SELECT srvoptions FROM pg_foreign_server
-- ----
SELECT * FROM pg_catalog.pg_foreign_data_wrapper
-- ----
SELECT conninfo FROM pg_stat_wal_receiver
-- ----
SELECT * FROM pg_stat_statements_info
-- ----
SELECT x FROM customers, LATERAL (SELECT umoptions FROM pg_user_mapping) x
-- ----
SELECT txid_current()
-- ----
SELECT pg_current_xact_id()
-- ----
SELECT (1).txid_current
-- ----
SELECT * FROM pg_show_all_settings() WHERE name = 'data_directory'
