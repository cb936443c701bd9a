-- dialect: postgres
SELECT make_interval(secs => pg_sleep(1)::text::float)
-- ----
SELECT format('%s', VARIADIC ARRAY[pg_sleep(1)::text])
-- ----
SELECT * FROM customers ORDER BY (SELECT pg_sleep(1))
-- ----
SELECT * FROM customers c JOIN LATERAL (SELECT pg_advisory_lock(c.id)) x ON true
-- ----
SELECT array(SELECT nextval('orders_id_seq'))
-- ----
SELECT ARRAY[1] || (SELECT set_config('a', 'b', false))::int
-- ----
SELECT CAST(pg_sleep(1) AS text)
-- ----
SELECT * FROM customers WHERE name IS DISTINCT FROM (SELECT lo_import('/etc/passwd'))::text
-- ----
SELECT 1 FROM customers GROUP BY GROUPING SETS ((pg_sleep(1)))
-- ----
SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM customers
-- ----
SELECT * FROM customers WINDOW w AS (ORDER BY pg_sleep(1))
-- ----
SELECT string_agg(name, ',' ORDER BY pg_sleep(0.1)) FROM customers
-- ----
SELECT * FROM (VALUES (pg_sleep(1))) v
-- ----
SELECT * FROM customers WHERE id = ANY(SELECT pg_terminate_backend(pid) FROM pg_stat_activity)
-- ----
SELECT 1 LIMIT pg_sleep(1)::int
-- ----
SELECT 1 OFFSET (SELECT pg_sleep(1))::int
-- ----
SELECT * FROM unnest(ARRAY[1]) WITH ORDINALITY AS u(x, n) WHERE pg_sleep(0) IS NULL
-- ----
SELECT (pg_sleep(1))
-- ----
SELECT COALESCE((SELECT 1 WHERE false), (SELECT 2 FROM pg_sleep(1)))
-- ----
SELECT * FROM customers TABLESAMPLE BERNOULLI (pg_sleep(1)::int)
-- ----
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE pg_sleep(0.01) IS NOT NULL) SELECT * FROM r
-- ----
SELECT (SELECT (SELECT (SELECT dblink_exec('dbname=postgres', 'DROP TABLE customers'))))
-- ----
SELECT * FROM customers c WHERE c.id IN (SELECT o.customer_id FROM orders o, LATERAL pg_ls_dir('.') f)
-- ----
SELECT CASE WHEN (SELECT count(*) FROM customers) > 0 THEN pg_read_file('/etc/passwd') ELSE '' END
-- ----
SELECT greatest(1, pg_cancel_backend(1)::int)
