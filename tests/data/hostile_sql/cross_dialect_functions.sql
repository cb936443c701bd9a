-- dialect: postgres
SELECT SECRET('x', 'y')
-- ----
SELECT id FROM customers WHERE SEARCH(name, 'a') IS NOT NULL
-- ----
SELECT * FROM ENCRYPT('/etc/passwd') AS f
-- ----
SELECT DECRYPT(name) FROM customers
-- ----
WITH s AS (SELECT READ_CSV(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY READ_PARQUET(id, 'k')
-- ----
SELECT coalesce(TO_FILE('a'), 'b')
-- ----
SELECT "ADDDATE"(1, 2, 3)
-- ----
SELECT APPROXIMATE_COUNT_DISTINCT('x', 'y')
-- ----
SELECT id FROM customers WHERE ARG_MAX(name, 'a') IS NOT NULL
-- ----
SELECT * FROM ARRAY_CONCAT('/etc/passwd') AS f
-- ----
SELECT ARRAY_MAX(name) FROM customers
-- ----
WITH s AS (SELECT BITMAP_BIT_POSITION(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY BITXORAGG(id, 'k')
-- ----
SELECT coalesce(BOOLOR_AGG('a'), 'b')
-- ----
SELECT "COMBINED_AGG_FUNC"(1, 2, 3)
-- ----
SELECT CURRENTDATABASE('x', 'y')
-- ----
SELECT id FROM customers WHERE CURRENT_TIMESTAMP_L_T_Z(name, 'a') IS NOT NULL
-- ----
SELECT * FROM DATETIME_TRUNC('/etc/passwd') AS f
-- ----
SELECT DAY_OF_MONTH(name) FROM customers
-- ----
WITH s AS (SELECT ELEMENT_AT(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY FIND(id, 'k')
-- ----
SELECT coalesce(FROM_JSON('a'), 'b')
-- ----
SELECT "GETBIT"(1, 2, 3)
-- ----
SELECT HASH_SHA('x', 'y')
-- ----
SELECT id FROM customers WHERE INT(name, 'a') IS NOT NULL
-- ----
SELECT * FROM JSON_ARRAY('/etc/passwd') AS f
-- ----
SELECT JSON_SET(name) FROM customers
-- ----
WITH s AS (SELECT J_S_O_N_VALUE_ARRAY(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY LISTAGG(id, 'k')
-- ----
SELECT coalesce(LOG2('a'), 'b')
-- ----
SELECT "MD5_BINARY"(1, 2, 3)
-- ----
SELECT M_L_TRANSLATE('x', 'y')
-- ----
SELECT id FROM customers WHERE OBJECT_KEYS(name, 'a') IS NOT NULL
-- ----
SELECT * FROM POSEXPLODE('/etc/passwd') AS f
-- ----
SELECT REGEXP_CONTAINS(name) FROM customers
-- ----
WITH s AS (SELECT SAFE_CONVERT_BYTES_TO_STRING(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY SEQ8(id, 'k')
-- ----
SELECT coalesce(SLICE('a'), 'b')
-- ----
SELECT "STDEV"(1, 2, 3)
-- ----
SELECT STR_TO_TIME('x', 'y')
-- ----
SELECT id FROM customers WHERE TIMEDIFF(name, 'a') IS NOT NULL
-- ----
SELECT * FROM TIMESTAMP_TRUNC('/etc/passwd') AS f
-- ----
SELECT TOSTARTOFDAY(name) FROM customers
-- ----
WITH s AS (SELECT TRUNCATE(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY TRY_TO_DECFLOAT(id, 'k')
-- ----
SELECT coalesce(TYPEOF('a'), 'b')
-- ----
SELECT "UUID_STRING"(1, 2, 3)
-- ----
SELECT XMLTABLE('x', 'y')
