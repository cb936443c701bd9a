-- dialect: sqlite
-- escapes: on
SELECT name FROM customers\x00; DROP TABLE orders
-- ----
SELECT load_extension('x')\x00
-- ----
SELECT 'a\x00b'
-- ----
SELECT\x0b name FROM customers
-- ----
SELECT name FROM customers WHERE id = 1\x1f OR 1 = 1
-- ----
SELECT "na\x80me" FROM customers
-- ----
SELECT name\x7f FROM customers
