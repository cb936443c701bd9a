-- dialect: postgres
SELECT rolname, rolpassword FROM pg_authid
-- ----
SELECT * FROM pg_catalog.pg_authid
-- ----
SELECT usename, passwd FROM pg_shadow
-- ----
SELECT * FROM "pg_catalog"."pg_shadow"
-- ----
SELECT umoptions FROM pg_user_mapping
-- ----
SELECT * FROM pg_user_mappings
-- ----
SELECT * FROM pg_hba_file_rules
-- ----
SELECT * FROM pg_file_settings
-- ----
SELECT name, setting FROM pg_settings WHERE name = 'data_directory'
-- ----
SELECT query FROM pg_stat_activity WHERE pid <> pg_backend_pid()
-- ----
SELECT data FROM pg_largeobject
-- ----
SELECT c.name FROM customers c WHERE EXISTS (SELECT 1 FROM pg_authid WHERE rolsuper)
-- ----
WITH s AS (SELECT * FROM pg_shadow) SELECT * FROM s
-- ----
SELECT * FROM customers UNION ALL SELECT rolname, rolpassword, NULL, NULL FROM PG_AUTHID
