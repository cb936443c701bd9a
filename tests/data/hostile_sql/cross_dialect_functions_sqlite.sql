-- dialect: sqlite
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
SELECT APPLY('x', 'y')
-- ----
SELECT id FROM customers WHERE ARGMIN(name, 'a') IS NOT NULL
-- ----
SELECT * FROM ARRAY_ALL('/etc/passwd') AS f
-- ----
SELECT ARRAY_INSERT(name) FROM customers
-- ----
WITH s AS (SELECT ARRAY_UNION_AGG(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY BITORAGG(id, 'k')
-- ----
SELECT coalesce(BIT_LENGTH('a'), 'b')
-- ----
SELECT "BOOLXOR_AGG"(1, 2, 3)
-- ----
SELECT CODE_POINTS_TO_BYTES('x', 'y')
-- ----
SELECT id FROM customers WHERE COT(name, 'a') IS NOT NULL
-- ----
SELECT * FROM CURRENT_DATE('/etc/passwd') AS f
-- ----
SELECT CURRENT_USER_ID(name) FROM customers
-- ----
WITH s AS (SELECT DATE_BIN(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY DAY_OF_MONTH(id, 'k')
-- ----
SELECT coalesce(EDITDISTANCE('a'), 'b')
-- ----
SELECT "EXTRACT"(1, 2, 3)
-- ----
SELECT FROM_BASE32('x', 'y')
-- ----
SELECT id FROM customers WHERE GENERATE_TABLE(name, 'a') IS NOT NULL
-- ----
SELECT * FROM GROUPBITXOR('/etc/passwd') AS f
-- ----
SELECT IDENTIFIER(name) FROM customers
-- ----
WITH s AS (SELECT JARO_WINKLER_SIMILARITY(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY JSON_FORMAT(id, 'k')
-- ----
SELECT coalesce(J_S_O_N_B_CONTAINS_TOP_KEY('a'), 'b')
-- ----
SELECT "LAX_STRING"(1, 2, 3)
-- ----
SELECT LIST_HAS('x', 'y')
-- ----
SELECT id FROM customers WHERE MAKE_TIMESTAMP(name, 'a') IS NOT NULL
-- ----
SELECT * FROM MD5_NUMBER_LOWER64('/etc/passwd') AS f
-- ----
SELECT NEGATIVE(name) FROM customers
-- ----
WITH s AS (SELECT OBJECT_TRANSFORM(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY POSEXPLODE_OUTER(id, 'k')
-- ----
SELECT coalesce(REGEXP_CONTAINS('a'), 'b')
-- ----
SELECT "REGR_SXY"(1, 2, 3)
-- ----
SELECT SAFE_DIVIDE('x', 'y')
-- ----
SELECT id FROM customers WHERE SEQUENCE(name, 'a') IS NOT NULL
-- ----
SELECT * FROM SIMILARITY('/etc/passwd') AS f
-- ----
SELECT STARTSWITH(name) FROM customers
-- ----
WITH s AS (SELECT STRUCT(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY SYSDATETIME(id, 'k')
-- ----
SELECT coalesce(TIMESTAMP_FROM_PARTS('a'), 'b')
-- ----
SELECT "TIME_TO_STR"(1, 2, 3)
-- ----
SELECT TO_BASE32('x', 'y')
-- ----
SELECT id FROM customers WHERE TO_TIME(name, 'a') IS NOT NULL
-- ----
SELECT * FROM TRY_BASE64_DECODE_BINARY('/etc/passwd') AS f
-- ----
SELECT TRY_TO_NUMBER(name) FROM customers
-- ----
WITH s AS (SELECT UNIX_DATE(1, 2) AS v) SELECT v FROM s
-- ----
SELECT name FROM customers ORDER BY VAR_MAP(id, 'k')
-- ----
SELECT coalesce(XMLTABLE('a'), 'b')
