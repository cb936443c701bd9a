-- dialect: postgres
SELECT MATCH_AGAINST(name, 'x') FROM customers
-- ----
SELECT PARAMETERIZED_AGG(1, 2, 3)
-- ----
SELECT X_M_L_TABLE(1, 2)
-- ----
SELECT COMBINED_PARAMETERIZED_AGG(1, 2, 3) FROM customers
-- ----
SELECT J_S_O_N_EXISTS(1, 2, 3) FROM customers
-- ----
SELECT J_S_O_N_OBJECT(name, 'x') FROM customers
-- ----
SELECT J_S_O_N_OBJECT_AGG(1, 2) FROM customers
-- ----
SELECT OPEN_J_S_O_N(1, 2, 3) FROM customers
-- ----
SELECT LEVENSHTEIN_LESS_EQUAL() FROM customers
-- ----
SELECT VAR_MAP(1, 2, 3) FROM customers
-- ----
SELECT id FROM customers WHERE MATCH_AGAINST(name, 'x') IS NOT NULL
-- ----
SELECT GAP_FILL(1)
