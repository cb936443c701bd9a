-- dialect: sqlite
SELECT SECRET(name) FROM customers
-- ----
WITH s AS (SELECT SEARCH(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY ENCRYPT(id, 'k')
-- ----
SELECT coalesce(DECRYPT('a'), 'b')
-- ----
SELECT "READ_CSV"(1, 2, 3)
-- ----
SELECT READ_PARQUET('x', 'y')
-- ----
SELECT id FROM customers WHERE TO_FILE(name, 'a') IS NOT NULL
-- ----
SELECT * FROM ADDDATE('/etc/passwd') AS f
-- ----
SELECT APPLY(name) FROM customers
-- ----
WITH s AS (SELECT ARGMIN(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY ARRAY_ALL(id, 'k')
-- ----
SELECT coalesce(ARRAY_INSERT('a'), 'b')
-- ----
SELECT "ARRAY_UNION_AGG"(1, 2, 3)
-- ----
SELECT BITORAGG('x', 'y')
-- ----
SELECT id FROM customers WHERE BIT_LENGTH(name, 'a') IS NOT NULL
-- ----
SELECT * FROM BOOLXOR_AGG('/etc/passwd') AS f
-- ----
SELECT CODE_POINTS_TO_BYTES(name) FROM customers
-- ----
WITH s AS (SELECT COT(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY CURRENT_DATE(id, 'k')
-- ----
SELECT coalesce(CURRENT_USER_ID('a'), 'b')
-- ----
SELECT "DATE_BIN"(1, 2, 3)
-- ----
SELECT DAY_OF_MONTH('x', 'y')
-- ----
SELECT id FROM customers WHERE EDITDISTANCE(name, 'a') IS NOT NULL
-- ----
SELECT * FROM EXTRACT('/etc/passwd') AS f
-- ----
SELECT FROM_BASE32(name) FROM customers
-- ----
WITH s AS (SELECT GENERATE_TABLE(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY GROUPBITXOR(id, 'k')
-- ----
SELECT coalesce(IDENTIFIER('a'), 'b')
-- ----
SELECT "JARO_WINKLER_SIMILARITY"(1, 2, 3)
-- ----
SELECT JSON_FORMAT('x', 'y')
-- ----
SELECT id FROM customers WHERE J_S_O_N_B_CONTAINS_TOP_KEY(name, 'a') IS NOT NULL
-- ----
SELECT * FROM LAX_STRING('/etc/passwd') AS f
-- ----
SELECT LIST_HAS(name) FROM customers
-- ----
WITH s AS (SELECT MAKE_TIMESTAMP(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY MD5_NUMBER_LOWER64(id, 'k')
-- ----
SELECT coalesce(NEGATIVE('a'), 'b')
-- ----
SELECT "OBJECT_TRANSFORM"(1, 2, 3)
-- ----
SELECT POSEXPLODE_OUTER('x', 'y')
-- ----
SELECT id FROM customers WHERE REGEXP_CONTAINS(name, 'a') IS NOT NULL
-- ----
SELECT * FROM REGR_SXY('/etc/passwd') AS f
-- ----
SELECT SAFE_DIVIDE(name) FROM customers
-- ----
WITH s AS (SELECT SEQUENCE(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY SIMILARITY(id, 'k')
-- ----
SELECT coalesce(STARTSWITH('a'), 'b')
-- ----
SELECT "STRUCT"(1, 2, 3)
-- ----
SELECT SYSDATETIME('x', 'y')
-- ----
SELECT id FROM customers WHERE TIMESTAMP_FROM_PARTS(name, 'a') IS NOT NULL
-- ----
SELECT * FROM TIME_TO_STR('/etc/passwd') AS f
-- ----
SELECT TO_BASE32(name) FROM customers
-- ----
WITH s AS (SELECT TO_TIME(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY TRY_BASE64_DECODE_BINARY(id, 'k')
-- ----
SELECT coalesce(TRY_TO_NUMBER('a'), 'b')
-- ----
SELECT "UNIX_DATE"(1, 2, 3)
-- ----
SELECT VAR_MAP('x', 'y')
-- ----
SELECT id FROM customers WHERE XMLTABLE(name, 'a') IS NOT NULL
