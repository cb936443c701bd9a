-- dialect: sqlite
SELECT MATCH_AGAINST(name, 'x') FROM customers
-- ----
SELECT PARAMETERIZED_AGG(1, 2, 3)
-- ----
SELECT X_M_L_TABLE(1, 2)
-- ----
SELECT J_S_O_N_OBJECT(1, 2) FROM customers
-- ----
SELECT VAR_MAP('a') FROM customers
-- ----
SELECT LEVENSHTEIN_LESS_EQUAL() FROM customers
