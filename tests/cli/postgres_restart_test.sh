# The PostgreSQL server restarted twice in the middle of a study that 4
# `bfhpo optimize` workers share: every worker reconnects and goes on (exit
# 0), the study ends with exactly n_trials trials, numbered 0..n-1, each
# COMPLETE once: none lost, none created twice, none left RUNNING.
source "$(dirname "$0")/lib.sh"
require_postgres
[ -n "${BFHPO_TEST_POSTGRES_RESTART:-}" ] || { echo "Skipped: scripts/with-postgres exported no restart command"; exit 77; }
URL="$(pg_database restart)"
N=8
write_training_study "$WORK/tiny.json" "$N" "\"storage\": \"$URL\",
 \"training\": {\"epochs\": 6, \"num_batches\": 3, \"batch_size\": 8, \"validation_sims\": 8, \"device\": \"cpu\"}"

start_workers "$WORK/tiny.json" 4
# wait_for_sql AT_LEAST SQL: polls until the query's count reaches AT_LEAST.
wait_for_sql() {
  local deadline=$((SECONDS + 300))
  until [ "$(pg_sql "$URL" "$2" 2>/dev/null || echo 0)" -ge "$1" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no $1 rows of: $2; the workers said: $(tail -n 3 "$WORK"/worker*.err)"
    sleep 0.05
  done
}
# First restart while the first trials train, the second once the study is half done. Every worker has
# connected and started a trial by then: a worker still loading LibTorch on a busy machine would otherwise
# open its first connection while the server shuts down, which is refused (exit 2) by design.
wait_for_sql 4 "SELECT count(DISTINCT value_json::json->>'pid') FROM trial_system_attributes WHERE key = 'bfhpo:worker'"
wait_for_sql 3 "SELECT count(DISTINCT trial_id) FROM trial_intermediate_values"
"$BFHPO_TEST_POSTGRES_RESTART" fast || fail "the first restart failed"
wait_for_sql $((N / 2)) "SELECT count(*) FROM trials WHERE state = 'COMPLETE'"
"$BFHPO_TEST_POSTGRES_RESTART" fast || fail "the second restart failed"
for w in 1 2 3 4; do
  wait "${WORKER_PIDS[$((w - 1))]}" || fail "worker $w failed after the restart: $(tail -5 "$WORK/worker$w.err")"
done
BG_PIDS=""

[ "$(pg_sql "$URL" "SELECT count(*) FROM trials")" = "$N" ] ||
  fail "expected $N trials: $(pg_sql "$URL" "SELECT number, state FROM trials ORDER BY number")"
[ "$(pg_sql "$URL" "SELECT string_agg(number::text, ',' ORDER BY number) FROM trials WHERE state = 'COMPLETE'")" = \
  "$(seq -s, 0 $((N - 1)))" ] || fail "not every trial COMPLETE once: $(pg_sql "$URL" "SELECT number, state FROM trials ORDER BY number")"
[ "$(pg_sql "$URL" "SELECT count(*) FROM trial_values")" = "$N" ] || fail "a trial has no value or two"
"$BFHPO" status "$WORK/tiny.json" --json | "$OPTUNA_PYTHON" -c '
import json, sys
s = json.load(sys.stdin)
assert s["finished"] == int(sys.argv[1]) and s["counts"]["COMPLETE"] == int(sys.argv[1]), s["counts"]' "$N" ||
  fail "status does not see $N COMPLETE trials"
echo "postgres restart: 4 workers went on through two restarts; $N trials, each COMPLETE once"
