#!/usr/bin/env bash
# The knowledge base's measurement (issue 12): on one random draw of questions from Spider dev and BIRD
# dev's three databases that the degraded-schema set also holds, with one reader through one
# OpenAI-compatible endpoint (e.g. the llm-relay) sharing one LLM response cache, four systems at once:
#   single_shot on the original schema, single_shot on the degraded schema,
#   single_shot on the degraded schema with the knowledge base, tree on the degraded schema with it;
# then one table: accuracy, the share of the accuracy lost to degradation that each recovers, LLM calls,
# tokens and seconds per question, and every question's id and outcome.
#
#   N=100 SEED=1 OPENAI_BASE_URL=http://127.0.0.1:18900/v1 bash evals/relay_ask.sh
#
# DEGRADED picks the degraded set (e.g. one built with `make_degraded.py --level hard`; OUT then defaults to a
# folder named after it; LEVEL=hard builds it there when missing); GLOSSARY=1 builds the two knowledge-base systems' knowledge bases with the set's data
# dictionary (bench_ask --glossary; their logs end in kb2200dict, so a GLOSSARY=0 and a GLOSSARY=1 run can share
# one OUT: the systems without a knowledge base are then asked once).
#
#   DEGRADED=/work/relay7/degraded_hard GLOSSARY=1 N=100 SEED=1 OPENAI_BASE_URL=... bash evals/relay_ask.sh
#
# Knowledge bases are built (LLM-free, templated descriptions) before the runs start; an interrupted run
# resumes where it stopped. ACTSAGENT_LLM_CACHE=replay_only replays a recorded run without any endpoint.
# A run through the relay measures whoever answered, not a named model.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100}
SEED=${SEED:-1}
PY=${PY:-.venv/bin/python}
DEGRADED=${DEGRADED:-evals/out/degraded}
LEVEL=${LEVEL:-default}  # the level make_degraded.py builds DEGRADED at when it is missing
GLOSSARY=${GLOSSARY:-0}
case "$GLOSSARY" in 0) KB=(--kb); KBTAG=kb2200 ;; 1) KB=(--kb --glossary); KBTAG=kb2200dict ;;
  *) echo "GLOSSARY must be 0 or 1" >&2; exit 2 ;; esac
[ "$DEGRADED" = evals/out/degraded ] && SET= || SET=_$(basename "$DEGRADED")
OUT=${OUT:-evals/out/relay_ask_n${N}_s${SEED}${SET}}
WORKERS=${WORKERS:-3}  # questions at a time per system (four systems run at once)
mkdir -p "$OUT"
export OPENAI_API_KEY=${OPENAI_API_KEY:-none} ACTSAGENT_MODEL=${ACTSAGENT_MODEL:-relay}
export ACTSAGENT_MAX_WALL_S=${ACTSAGENT_MAX_WALL_S:-5000} ACTSAGENT_LLM_TIMEOUT=${ACTSAGENT_LLM_TIMEOUT:-3000}
export ACTSAGENT_LLM_MAX_RETRIES=${ACTSAGENT_LLM_MAX_RETRIES:-1}
export ACTSAGENT_LLM_CACHE=${ACTSAGENT_LLM_CACHE:-read_write} ACTSAGENT_LLM_CACHE_DIR=${ACTSAGENT_LLM_CACHE_DIR:-$OUT/llm_cache}
[ -f "$DEGRADED/spider_dev/questions.json" ] && [ -f "$DEGRADED/bird_dev/questions.json" ] ||
  "$PY" evals/make_degraded.py --out "$DEGRADED" --level "$LEVEL" > "$OUT/make_degraded.log" 2>&1
DRAW=(--bench spider_dev,bird_dev --sample "$N" --seed "$SEED" --paired --out "$OUT" --degraded "$DEGRADED")
"$PY" evals/bench_ask.py "${DRAW[@]}" --variant degraded "${KB[@]}" --build-kb-only > "$OUT/kb_build.log" 2>&1
run() {  # name, then bench_ask options
  local name=$1
  shift
  "$PY" evals/bench_ask.py "${DRAW[@]}" --workers "$WORKERS" "$@" > "$OUT/$name.md" 2> "$OUT/$name.log"
}
run single_shot_original --mode single_shot --variant original &
run single_shot_degraded --mode single_shot --variant degraded &
run "single_shot_degraded_$KBTAG" --mode single_shot --variant degraded "${KB[@]}" &
run "tree_degraded_$KBTAG" --mode tree --variant degraded "${KB[@]}" &
fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
[ "$fail" = 0 ] || { echo "a system failed: see $OUT/*.log" >&2; exit 1; }
tag=spider_dev+bird_dev_sqlite
"$PY" evals/bench_ask.py --out "$OUT" --compare \
  "$OUT/bench_ask_${tag}_single_shot_original_nohints_nokb.jsonl" \
  "$OUT/bench_ask_${tag}_single_shot_degraded_nohints_nokb.jsonl" \
  "$OUT/bench_ask_${tag}_single_shot_degraded_nohints_${KBTAG}.jsonl" \
  "$OUT/bench_ask_${tag}_tree_degraded_nohints_${KBTAG}.jsonl"
