-- dialect: postgres
DO $$ BEGIN DELETE FROM orders; END $$
-- ----
DO $body$ BEGIN EXECUTE 'DROP TABLE customers'; END $body$
-- ----
DO LANGUAGE plpgsql $$ BEGIN PERFORM pg_sleep(10); END $$
-- ----
SELECT $a$ $b$ $a$; DROP TABLE customers
-- ----
SELECT $_$;$_$ ; DELETE FROM orders
-- ----
SELECT U&"pg\0073leep"(5)
-- ----
SELECT U&"\0070\0067\005f\0073\006c\0065\0065\0070"(5)
-- ----
SELECT U&"pg!0073leep"(5) UESCAPE '!'
-- ----
SELECT * FROM U&"\0063ustomers"; DELETE FROM orders
-- ----
SELECT U&'\0027; DROP TABLE customers; --'; DELETE FROM orders
-- ----
SELECT E'\x27; DROP TABLE customers; --'; DELETE FROM orders
-- ----
SELECT E'\u0027'; DROP TABLE customers
-- ----
SELECT e'\\'; DELETE FROM orders; --'
-- ----
SELECT B'1010'; DROP TABLE customers
-- ----
SELECT X'1F'; DELETE FROM orders
-- ----
SELECT query_to_xml($q$DELETE FROM orders RETURNING *$q$, true, false, '')
-- ----
SELECT query_to_xml(E'DELETE FROM orders RETURNING 1', true, false, '')
-- ----
SELECT set_config($$default_transaction_read_only$$, $$off$$, false)
-- ----
SELECT xmlparse(document query_to_xml('UPDATE customers SET name = 1 RETURNING 1', true, true, ''))
-- ----
SELECT 1 WHERE (SELECT count(*) FROM dblink($$dbname=postgres$$, $$DELETE FROM orders$$) AS t(x text)) > 0
