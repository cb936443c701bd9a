#!/usr/bin/env bash
# Issue 12's measurement on a degraded set with its data dictionary, on the embedded PostgreSQL (schema
# refinement needs it), five systems at once through one endpoint and one LLM response cache:
#   single_shot on the original schema, single_shot on the degraded schema (no knowledge base),
#   single_shot with the knowledge base built with the data dictionary, the same over the refined views,
#   and then the tree with the knowledge base over the refined views; then one comparison table.
#
#   DEGRADED=/path/to/degraded_hard N=100 SEED=4 OPENAI_BASE_URL=http://127.0.0.1:18900/v1 bash evals/relay_ask_refine.sh
#
# The refinements and knowledge bases are built first (no LLM). Each system runs on an embedded server of
# its own (ACTSAGENT_HOME=<home>_<system>; the tree refines its own copies first): five processes over
# twenty databases each need more connections than one server's default 100. A run through the relay measures whoever answered, not a named model.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100}
SEED=${SEED:-4}
PY=${PY:-.venv/bin/python}
DEGRADED=${DEGRADED:?set DEGRADED to a set built by evals/make_degraded.py (e.g. --level hard)}
OUT=${OUT:-evals/out/relay_ask_refine_n${N}_s${SEED}}
HOME_BASE=${HOME_BASE:-${ACTSAGENT_HOME:-$HOME/.local/share/actsagent}}
mkdir -p "$OUT"
export OPENAI_API_KEY=${OPENAI_API_KEY:-none} ACTSAGENT_MODEL=${ACTSAGENT_MODEL:-relay}
export ACTSAGENT_MAX_WALL_S=${ACTSAGENT_MAX_WALL_S:-5000} ACTSAGENT_LLM_TIMEOUT=${ACTSAGENT_LLM_TIMEOUT:-3000}
export ACTSAGENT_LLM_MAX_RETRIES=${ACTSAGENT_LLM_MAX_RETRIES:-1}
export ACTSAGENT_LLM_CACHE=${ACTSAGENT_LLM_CACHE:-read_write} ACTSAGENT_LLM_CACHE_DIR=${ACTSAGENT_LLM_CACHE_DIR:-$OUT/llm_cache}
DRAW=(--bench spider_dev,bird_dev --sample "$N" --seed "$SEED" --paired --degraded "$DEGRADED" --out "$OUT" --engine postgres)
ACTSAGENT_HOME="${HOME_BASE}_refined" "$PY" evals/bench_ask.py "${DRAW[@]}" --variant degraded --kb --glossary --refine \
  --build-kb-only > "$OUT/prep_refine.log" 2>&1
run() {  # name, server home suffix, then bench_ask options
  local name=$1 home=$2
  shift 2
  ACTSAGENT_HOME="${HOME_BASE}_$home" "$PY" evals/bench_ask.py "${DRAW[@]}" --workers "${WORKERS:-2}" "$@" \
    > "$OUT/$name.md" 2> "$OUT/$name.log"
}
run single_shot_original original --mode single_shot --variant original &
run single_shot_degraded degraded --mode single_shot --variant degraded &
run single_shot_degraded_kb kb --mode single_shot --variant degraded --kb --glossary &
run single_shot_degraded_kb_refined refined --mode single_shot --variant degraded --kb --glossary --refine &
fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
[ "$fail" = 0 ] || { echo "a system failed: see $OUT/*.log" >&2; exit 1; }
# the tree after the single-shot runs: its first draft is the same request as the single-shot one over the refined
# views, answered from the cache, so the two differ only where the tree revised the draft
run tree_degraded_kb_refined refined_tree --mode tree --variant degraded --kb --glossary --refine ||
  { echo "the tree failed: see $OUT/tree_degraded_kb_refined.log" >&2; exit 1; }
tag=spider_dev+bird_dev_postgres
"$PY" evals/bench_ask.py --out "$OUT" --compare \
  "$OUT/bench_ask_${tag}_single_shot_original_nohints_nokb.jsonl" \
  "$OUT/bench_ask_${tag}_single_shot_degraded_nohints_nokb.jsonl" \
  "$OUT/bench_ask_${tag}_single_shot_degraded_nohints_kb2200dict.jsonl" \
  "$OUT/bench_ask_${tag}_single_shot_degraded_nohints_kb2200dict_refined.jsonl" \
  "$OUT/bench_ask_${tag}_tree_degraded_nohints_kb2200dict_refined.jsonl"
