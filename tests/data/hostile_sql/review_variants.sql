-- dialect: postgres
-- escapes: on
SELECT (lower('/etc/hostname')).pg_read_file
-- ----
SELECT (('/etc/' || 'host' || 'name')).Pg_Read_File
-- ----
SELECT (t.v).pg_stat_file FROM (VALUES ('/etc/hostname')) AS t(v)
-- ----
SELECT (v.column1).pg_ls_dir FROM (VALUES ('.'::text)) AS v
-- ----
SELECT (c.name)."pg_sleep_for" FROM customers c
-- ----
SELECT name FROM customers c ORDER BY (c.id::float8).pg_sleep
-- ----
SELECT id FROM customers WHERE (SELECT ('data_directory'::text).current_setting) IS NOT NULL
-- ----
SELECT (x).set_config FROM (SELECT 'work_mem'::text AS x) s
-- ----
SELECT name FROM customers\x00 WHERE pg_sleep(3) IS NULL
-- ----
SELECT name FROM customers /*\x00*/ UNION ALL SELECT usename::text FROM pg_user
-- ----
SELECT $q$a\x00$q$ || pg_read_file('/etc/hostname')
-- ----
SELECT name FROM customers\x0b\x00
-- ----
SELECT SLEEP(3)
-- ----
SELECT LOAD_FILE('/etc/hostname')
-- ----
SELECT IFNULL(pg_sleep(1)::text, 'x')
-- ----
SELECT NVL(pg_read_file('/etc/hostname'), 'x')
-- ----
SELECT READ_JSON('/etc/hostname')
-- ----
SELECT name FROM customers WHERE BENCHMARK(1000000, md5('x')) = 0
