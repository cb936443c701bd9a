-- dialect: postgres
SELECT 1; DROP TABLE customers
-- ----
SELECT * FROM customers; DELETE FROM orders
-- ----
SELECT 1;SELECT 2
-- ----
SELECT id FROM customers WHERE id = 1; UPDATE customers SET name = 'x'
-- ----
SELECT 1; COMMIT; DROP TABLE orders
-- ----
SELECT 1;
INSERT INTO customers (name) VALUES ('mallory');
-- ----
SELECT 'a;b'; TRUNCATE orders
-- ----
SELECT "a;b" FROM customers; DROP SCHEMA public CASCADE
-- ----
SELECT 1 /* ; */ ; ALTER TABLE customers DROP COLUMN name
-- ----
SELECT 1 -- harmless
; GRANT ALL ON customers TO PUBLIC
-- ----
SELECT $$;$$; DROP TABLE customers
-- ----
SELECT $tag$ it's ; fine $tag$; DELETE FROM customers
-- ----
SELECT 'it''s'; DELETE FROM customers
-- ----
SELECT E'\\'; DROP TABLE customers; --'
-- ----
SELECT E'\''; DROP TABLE customers; --'
-- ----
WITH a AS (SELECT 1) SELECT * FROM a; CREATE TABLE stolen AS SELECT * FROM customers
-- ----
SELECT 1 UNION SELECT 2; SET ROLE postgres
-- ----
(SELECT 1); (DELETE FROM orders)
-- ----
VALUES (1); VACUUM FULL
-- ----
BEGIN; DELETE FROM orders; COMMIT
-- ----
SELECT 1 ; ; SELECT pg_sleep(10)
