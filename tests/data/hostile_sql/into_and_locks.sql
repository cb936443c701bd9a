-- dialect: postgres
SELECT * INTO stolen FROM customers
-- ----
SELECT id, name INTO TEMP scratch FROM customers
-- ----
SELECT * INTO UNLOGGED copy_of_orders FROM orders
-- ----
SELECT * INTO TABLE t2 FROM customers WHERE id = 1
-- ----
SELECT * FROM customers FOR UPDATE
-- ----
SELECT * FROM customers FOR SHARE
-- ----
SELECT * FROM customers FOR NO KEY UPDATE
-- ----
SELECT * FROM customers FOR KEY SHARE
-- ----
SELECT * FROM orders FOR UPDATE SKIP LOCKED
-- ----
SELECT * FROM orders FOR UPDATE NOWAIT
-- ----
SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id FOR UPDATE OF o
-- ----
SELECT * FROM (SELECT * FROM orders FOR UPDATE) s
-- ----
WITH locked AS (SELECT * FROM orders FOR UPDATE) SELECT * FROM locked
-- ----
SELECT * FROM customers WHERE id IN (SELECT customer_id FROM orders FOR SHARE)
-- ----
LOCK TABLE customers IN ACCESS EXCLUSIVE MODE
-- ----
select * from customers for update limit 1
