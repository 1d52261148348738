# 4 `bfhpo optimize` workers and 1 Optuna worker (Debian's Optuna 3.1, which
# creates the schema and the study) share one study in PostgreSQL; one bfhpo
# worker is killed with kill -9 in the middle of a trial. The survivors and a
# resume finish it: exactly n_trials finished, trial numbers distinct, the
# killed trial FAIL and re-run with its params, Optuna reads every trial.
source "$(dirname "$0")/lib.sh"
require_postgres
URL="$(pg_database workers)"
N=12
write_training_study "$WORK/tiny.json" "$N" "\"storage\": \"$URL\",
 \"training\": {\"epochs\": 8, \"num_batches\": 3, \"batch_size\": 8, \"validation_sims\": 8, \"device\": \"cpu\"}"

"$OPTUNA_PYTHON" - "$URL" > "$WORK/optuna.out" 2>&1 <<'PY' &
import sys, time, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(study_name="tiny", storage=sys.argv[1], direction="minimize", load_if_exists=True)
def objective(trial):
    trial.suggest_float("training.learning_rate", 1e-4, 1e-2, log=True)
    trial.suggest_int("flow.depth", 1, 3)
    time.sleep(0.2)
    return 5.0
study.optimize(objective, n_trials=2)
PY
OPTUNA_PID=$!
BG_PIDS="$OPTUNA_PID"
# The bfhpo workers join once the Optuna worker has created the study and its first trial.
deadline=$((SECONDS + 60))
until [ "$(pg_sql "$URL" "SELECT count(*) FROM trials" 2>/dev/null || echo 0)" -ge 1 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the Optuna worker created no trial: $(cat "$WORK/optuna.out")"
  sleep 0.1
done

start_workers "$WORK/tiny.json" 4
pids=("${WORKER_PIDS[@]}")
victim="${pids[0]}"
deadline=$((SECONDS + 60))
until [ "$(pg_sql "$URL" "SELECT count(*) FROM trial_intermediate_values v JOIN trial_system_attributes a
                          ON a.trial_id = v.trial_id AND a.key = 'bfhpo:worker'
                          WHERE (a.value_json::json->>'pid')::int = $victim")" -ge 1 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "worker 1 reported no epoch: $(cat "$WORK/worker1.err")"
  sleep 0.05
done
kill -9 "$victim"
rc=0; wait "$victim" || rc=$?
[ "$rc" -eq 137 ] || fail "worker 1 exited $rc, expected 137 (kill -9)"
for w in 2 3 4; do
  wait "${pids[$((w - 1))]}" || fail "worker $w failed: $(cat "$WORK/worker$w.err")"
done
wait "$OPTUNA_PID" || fail "the Optuna worker failed: $(cat "$WORK/optuna.out")"
BG_PIDS=""

# A resume re-queues the killed worker's trial (its process is gone) and runs it.
"$BFHPO" optimize "$WORK/tiny.json" > "$WORK/resume.out" 2> "$WORK/resume.err" || fail "resume failed: $(cat "$WORK/resume.err")"
"$BFHPO" status "$WORK/tiny.json" --json > "$WORK/status.json"

"$OPTUNA_PYTHON" - "$URL" "$N" "$victim" "$WORK/status.json" <<'PY'
import json, sys, optuna
url, n, victim, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.load(open(sys.argv[4]))
optuna.logging.set_verbosity(optuna.logging.WARNING)
trials = optuna.load_study(study_name="tiny", storage=url).get_trials(deepcopy=False)
TS = optuna.trial.TrialState
assert [t.number for t in trials] == list(range(len(trials))), [t.number for t in trials]
requeued = {t.system_attrs["bfhpo:requeued_from"]: t for t in trials if "bfhpo:requeued_from" in t.system_attrs}
killed = [t for t in trials if t.system_attrs.get("bfhpo:worker", {}).get("pid") == victim and t.state == TS.FAIL]
assert len(killed) == 1, [(t.number, t.state) for t in trials]
killed = killed[0]
assert killed.number in requeued and requeued[killed.number].state in (TS.COMPLETE, TS.PRUNED), requeued
assert requeued[killed.number].params == killed.params
finished = [t for t in trials if t.state in (TS.COMPLETE, TS.PRUNED) or (t.state == TS.FAIL and t.number not in requeued)]
assert len(finished) == n, (len(finished), [(t.number, t.state.name) for t in trials])
assert not [t for t in trials if t.state in (TS.RUNNING, TS.WAITING)]
by_optuna = [t for t in trials if "bfhpo:worker" not in t.system_attrs and "bfhpo:requeued_from" not in t.system_attrs]
assert len(by_optuna) == 2 and all(t.value == 5.0 for t in by_optuna), by_optuna
assert status["finished"] == n, status
print(f"{len(trials)} trials, {n} finished, trial {killed.number} killed and re-run as {requeued[killed.number].number}")
PY
echo "postgres workers: all checks passed"
