-- dialect: postgres
SELECT my_udf(id) FROM customers
-- ----
SELECT * FROM customers WHERE evil_side_effect(id)
-- ----
SELECT gen_salt('bf')
-- ----
SELECT pgp_sym_decrypt(name::bytea, 'k') FROM customers
-- ----
SELECT http_get('http://evil.example/')
-- ----
SELECT * FROM pg_stat_statements_info()
-- ----
SELECT currval('orders_id_seq')
-- ----
SELECT pg_get_serial_sequence_then_write('orders', 'id')
-- ----
SELECT amcheck_everything()
-- ----
SELECT * FROM customers c, LATERAL unknown_srf(c.id)
