-- dialect: postgres
WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d
-- ----
WITH u AS (UPDATE customers SET name = 'x' RETURNING id) SELECT count(*) FROM u
-- ----
WITH i AS (INSERT INTO customers (name) VALUES ('x') RETURNING id) SELECT id FROM i
-- ----
WITH a AS (SELECT 1), d AS (DELETE FROM orders WHERE id > 0 RETURNING id) SELECT * FROM a
-- ----
WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3), d AS (DELETE FROM orders RETURNING 1) SELECT * FROM r
-- ----
WITH outer_cte AS (WITH inner_cte AS (DELETE FROM orders RETURNING id) SELECT id FROM inner_cte) SELECT * FROM outer_cte
-- ----
SELECT * FROM customers WHERE id IN (WITH d AS (DELETE FROM orders RETURNING customer_id) SELECT customer_id FROM d)
-- ----
WITH m AS (MERGE INTO customers c USING (SELECT 1 AS id) s ON c.id = s.id WHEN MATCHED THEN DELETE RETURNING c.id) SELECT * FROM m
-- ----
MERGE INTO customers c USING (SELECT 1 AS id) s ON c.id = s.id WHEN MATCHED THEN UPDATE SET name = 'x'
-- ----
WITH d AS MATERIALIZED (DELETE FROM orders RETURNING *) SELECT 1
-- ----
WITH d AS NOT MATERIALIZED (UPDATE orders SET total = 0 RETURNING *) SELECT 1
-- ----
WITH x AS (INSERT INTO orders (status) SELECT status FROM orders RETURNING 1) SELECT 1 UNION SELECT 2
-- ----
INSERT INTO customers (name) SELECT name FROM customers
-- ----
UPDATE customers SET name = (SELECT 'x')
-- ----
DELETE FROM orders USING customers WHERE orders.customer_id = customers.id
-- ----
TRUNCATE TABLE orders
-- ----
INSERT INTO customers (name) VALUES ('x') ON CONFLICT DO NOTHING
-- ----
with D as (delete from ORDERS returning *) select * from D
