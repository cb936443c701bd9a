-- dialect: postgres
SELECT 1 /* harmless */; DROP TABLE customers
-- ----
/* SELECT 1 */ DELETE FROM orders
-- ----
-- SELECT
DELETE FROM orders
-- ----
SELECT /* comment */ pg_sleep(5)
-- ----
SELECT pg_sleep/**/(5)
-- ----
SELECT "pg_sleep"(5)
-- ----
SELECT "PG_SLEEP"(5)
-- ----
SELECT PG_SLEEP(5)
-- ----
SELECT Pg_SlEeP(5)
-- ----
SELECT pg_catalog.pg_sleep(5)
-- ----
SELECT "pg_catalog"."pg_sleep"(5)
-- ----
SELECT PG_CATALOG.SET_CONFIG('default_transaction_read_only', 'off', false)
-- ----
SELECT public.evil_function()
-- ----
SELECT "public"."lower"('a')
-- ----
SELECT 1 /* /* nested */ */; DROP TABLE customers
-- ----
SELECT 1 /* /* nested */ DROP TABLE customers; */ ; DELETE FROM orders
-- ----
SELECT '*/ DROP TABLE customers; /*'; DELETE FROM orders
-- ----
SELECT 1 -- */ ; DELETE FROM orders
; DELETE FROM orders
-- ----
SELECT	pg_sleep	(5)
-- ----
SELECT
pg_sleep
(5)
-- ----
SELECT pg_sleep (5)
-- ----
SELECT pg_sleep(5)
-- ----
SELECT 1 AS "x"; DROP TABLE "customers"
-- ----
SELECT 'x' AS "DROP TABLE customers; --" ; DELETE FROM orders
-- ----
DeLeTe FrOm orders
-- ----
dRoP tAbLe customers
-- ----
SELECT * FROM customers WHERE name = '' OR pg_sleep(5) IS NULL
-- ----
SELECT * FROM customers WHERE name = 'a'' OR 1=1; DELETE FROM orders; --'; DELETE FROM orders
-- ----
SELECT * FROM customers WHERE name = $$a$$ OR set_config('role', 'postgres', false) IS NOT NULL
