#!/usr/bin/env bash
# Side by side on the same tasks with the same reader: single_shot, acts:tree and acts:linear at once,
# through one OpenAI-compatible endpoint (e.g. the llm-relay), sharing one LLM response cache, then the
# judge benchmark replayed from that cache and `actsagent birdcritic compare`.
#
#   IDS=1,7,8,... OUT=evals/out/relay OPENAI_BASE_URL=http://127.0.0.1:18900/v1 bash evals/relay_compare.sh
#
# A run through the relay measures whoever answered, not a named model.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${IDS:?set IDS to comma-separated flash instance ids (draw them at random: evals/bench_judge.py --n/--seed)}"
OUT=${OUT:-evals/out/relay_compare}
PY=${PY:-.venv/bin/python}
CLI=${CLI:-.venv/bin/actsagent}
mkdir -p "$OUT"
export OPENAI_API_KEY=${OPENAI_API_KEY:-none} ACTSAGENT_MODEL=${ACTSAGENT_MODEL:-relay}
export ACTSAGENT_MAX_WALL_S=${ACTSAGENT_MAX_WALL_S:-5000} ACTSAGENT_LLM_TIMEOUT=${ACTSAGENT_LLM_TIMEOUT:-3000}
export ACTSAGENT_LLM_MAX_RETRIES=${ACTSAGENT_LLM_MAX_RETRIES:-1}
export ACTSAGENT_LLM_CACHE=read_write ACTSAGENT_LLM_CACHE_DIR="$OUT/llm_cache"
run() {  # system workers
  "$CLI" birdcritic run --set flash --system "$1" --ids "$IDS" --out "$OUT/${1//:/_}" \
    --workers "$2" > "$OUT/${1//:/_}.log" 2>&1
}
run single_shot 2 &
run acts:tree 3 &
run acts:linear 2 &
wait
# Judge precision and recall: the same runs again from the cache (a prompt holding now() misses the
# cache and is asked again: the second bench_judge pass records it).
for s in tree linear; do
  "$PY" evals/bench_judge.py --system "acts:$s" --ids "$IDS" --out "$OUT/judge_$s" --cache read_write \
    --cache-dir "$OUT/llm_cache" --no-progress > "$OUT/judge_$s.log" 2>&1
done
"$CLI" birdcritic compare "$OUT/single_shot" "$OUT/acts_tree" "$OUT/acts_linear" --out "$OUT/compare"
