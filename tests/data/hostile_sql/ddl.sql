-- dialect: postgres
DROP TABLE customers
-- ----
DROP TABLE IF EXISTS customers CASCADE
-- ----
CREATE TABLE t (id int)
-- ----
CREATE TABLE stolen AS SELECT * FROM customers
-- ----
CREATE TEMP TABLE scratch AS SELECT 1
-- ----
CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ DELETE FROM orders; SELECT 1 $$ LANGUAGE sql
-- ----
CREATE VIEW v AS SELECT * FROM customers
-- ----
CREATE INDEX ON customers (name)
-- ----
CREATE EXTENSION dblink
-- ----
CREATE ROLE attacker SUPERUSER LOGIN
-- ----
ALTER TABLE customers ADD COLUMN pwned int
-- ----
ALTER ROLE CURRENT_USER SET default_transaction_read_only = off
-- ----
ALTER SYSTEM SET statement_timeout = 0
-- ----
ALTER DATABASE postgres OWNER TO attacker
-- ----
GRANT SELECT ON customers TO PUBLIC
-- ----
REVOKE SELECT ON customers FROM PUBLIC
-- ----
COMMENT ON TABLE customers IS 'pwned'
-- ----
CREATE TRIGGER t BEFORE INSERT ON customers FOR EACH ROW EXECUTE FUNCTION f()
-- ----
CREATE RULE r AS ON SELECT TO customers DO INSTEAD SELECT 1
-- ----
DROP DATABASE postgres
-- ----
CREATE SCHEMA evil
-- ----
CREATE SEQUENCE s
-- ----
ALTER SEQUENCE orders_id_seq RESTART WITH 1
-- ----
REFRESH MATERIALIZED VIEW mv
-- ----
CLUSTER customers USING customers_pkey
-- ----
REINDEX TABLE customers
-- ----
CREATE DATABASE copy TEMPLATE postgres
-- ----
CREATE FOREIGN TABLE ft (id int) SERVER s
-- ----
IMPORT FOREIGN SCHEMA public FROM SERVER s INTO public
-- ----
SECURITY LABEL ON TABLE customers IS 'x'
