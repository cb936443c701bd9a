-- dialect: postgres
-- escapes: on
SELECT rolname, rolpassword FROM pg_authid\x00
-- ----
SELECT name FROM customers WHERE id = 1\x00 UNION SELECT rolpassword FROM pg_authid
-- ----
SELECT 1\x00; DELETE FROM orders
-- ----
\x00SELECT 1
-- ----
SELECT name FROM customers WHERE name = 'a\x00' OR true
-- ----
SELECT "na\x00me" FROM customers
-- ----
SELECT 1 /* \x00 */ FROM customers
-- ----
SELECT 1 -- \x00
-- ----
SELECT $$\x00$$
-- ----
SELECT usename, passwd FROM pg_shadow\x01
-- ----
SELECT\x0b1
-- ----
SELECT 1\x1b[2J
-- ----
SELECT 'a\x7f' AS v
-- ----
SELECT name FROM customers\x9b
-- ----
SELECT\x9fname FROM customers
-- ----
SELECT\x08 1
-- ----
SELECT id FROM customers WHERE name LIKE 'A%'\x1a
-- ----
SELECT count(*) FROM orders WHERE status = 'paid\x0e'
-- ----
SELECT query FROM pg_stat_activity\x00 -- hidden
-- ----
SELECT name FROM customers\x85UNION SELECT rolpassword FROM pg_authid
-- ----
SELECT name FROM customers WHERE name = '\x1f' OR pg_sleep(1) IS NULL
-- ----
SELECT 1\x0b
-- ----
SELECT name FROM customers\x1c
