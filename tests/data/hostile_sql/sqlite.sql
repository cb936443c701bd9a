-- dialect: sqlite
SELECT 1; DROP TABLE customers
-- ----
ATTACH DATABASE '/tmp/evil.db' AS evil
-- ----
DETACH DATABASE main
-- ----
PRAGMA writable_schema = ON
-- ----
PRAGMA query_only = OFF
-- ----
SELECT load_extension('/tmp/evil.so')
-- ----
SELECT writefile('/tmp/x', name) FROM customers
-- ----
SELECT readfile('/etc/passwd')
-- ----
SELECT fts3_tokenizer('simple', x'00')
-- ----
VACUUM INTO '/tmp/copy.db'
-- ----
INSERT OR REPLACE INTO customers (id, name) VALUES (1, 'x')
-- ----
REPLACE INTO customers (id, name) VALUES (1, 'x')
-- ----
UPDATE OR IGNORE customers SET name = 'x'
-- ----
CREATE TRIGGER t AFTER INSERT ON customers BEGIN DELETE FROM orders; END
-- ----
WITH d AS (SELECT 1) DELETE FROM orders WHERE id IN (SELECT * FROM d)
-- ----
SELECT * FROM customers WHERE name = 'x' UNION SELECT load_extension('evil')
-- ----
SELECT edit('x', 'vi')
-- ----
BEGIN IMMEDIATE
-- ----
SELECT * FROM customers; PRAGMA foreign_keys = OFF
-- ----
CREATE VIRTUAL TABLE f USING fts5(x)
-- ----
SELECT * FROM customers WHERE id = 1 -- '; DELETE FROM orders
; DELETE FROM orders
-- ----
SELECT my_udf(name) FROM customers
