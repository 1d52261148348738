# Optuna's study.enqueue_trial(params), full and partial, served by `bfhpo ask`:
# Debian's Optuna 3.1 creates the study and enqueues, bfhpo asks and tells,
# Optuna reads back the same param values and the told values. On the file
# journal, and on PostgreSQL when scripts/with-postgres runs the test; and
# `bfhpo optimize` serving a partially fixed trial of a tiny training study.
# OPTUNA_PYTHONPATH=/work/ref/optuna5 runs the Optuna side on another Optuna.
source "$(dirname "$0")/lib.sh"
export PYTHONPATH="${OPTUNA_PYTHONPATH:-}"

# check_enqueued_served STORAGE OPTUNA_STORAGE: STORAGE as the study file names it,
# OPTUNA_STORAGE a Python expression of the same storage for Optuna.
check_enqueued_served() {
  local study="$WORK/enqueue.json"
  write_study "$study" 20 "\"storage\": \"$1\","
  "$OPTUNA_PYTHON" - "$2" <<'PY' || fail "Optuna could not enqueue"
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(study_name="demo", storage=eval(sys.argv[1]), direction="minimize")
study.enqueue_trial({"lr": 0.003, "depth": 5, "kind": "b", "heads": 4})  # full
study.enqueue_trial({"kind": "b"})                                      # partial: the rest sampled
study.enqueue_trial({"lr": 0.02, "depth": 3})                           # partial
study.enqueue_trial({"kind": "c"})                                      # not a choice: FAIL, as in Optuna
study.enqueue_trial({"depth": 11, "kind": "a"})                         # out of range: runs, as in Optuna
PY
  : > "$WORK/asked"
  for i in 1 2 3 4 5; do
    asked="$("$BFHPO" ask "$study" 2>> "$WORK/ask.err")" || fail "ask: $(cat "$WORK/ask.err")"
    echo "$asked" >> "$WORK/asked"
    n="$("$OPTUNA_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["trial"])' "$asked")"
    "$BFHPO" tell "$study" --trial "$n" --value "$(objective "$asked")" > /dev/null
  done
  grep -q "trial 3 is FAIL: its enqueued params cannot run" "$WORK/ask.err" || fail "no FAIL warning: $(cat "$WORK/ask.err")"
  grep -q "'depth' = 11 is out of range" "$WORK/ask.err" || fail "no out-of-range warning: $(cat "$WORK/ask.err")"
  echo '{"lr": 0.05, "depth": 6, "kind": "a"}' > "$WORK/fixed.json"
  "$BFHPO" enqueue "$study" --params "$WORK/fixed.json" > /dev/null  # bfhpo's own: params recorded, trial 6

  "$OPTUNA_PYTHON" - "$2" "$WORK/asked" <<'PY' || fail "Optuna disagrees with what bfhpo served"
import json, math, sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
S = optuna.trial.TrialState
study = optuna.load_study(study_name="demo", storage=eval(sys.argv[1]))
asked = [json.loads(line) for line in open(sys.argv[2])]
trials = study.get_trials(deepcopy=False)
assert [a["trial"] for a in asked] == [0, 1, 2, 4, 5], [a["trial"] for a in asked]
fixed = {t.number: t.system_attrs["fixed_params"] for t in trials[:5]}  # trial 5: a new one, sampled
assert trials[3].state == S.FAIL and trials[3].params == {}, trials[3]
for a in asked:
    t = trials[a["trial"]]
    assert t.state == S.COMPLETE, t
    assert t.params == a["params"], (t.params, a["params"])  # what bfhpo served is what Optuna reads
    for name, value in fixed.get(t.number, {}).items():
        assert t.params[name] == value and type(t.params[name]) is type(value), (name, t.params, value)
    active = {"lr", "depth", "kind"} | ({"heads"} if t.params["kind"] == "b" else set())
    assert set(t.params) == active, t.params
    assert 1e-4 <= t.params["lr"] <= 1e-1 and 1 <= t.params.get("heads", 1) <= 8, t.params
assert trials[4].params["depth"] == 11 and "fixed_params" not in trials[5].system_attrs
# The sampled values differ between the two partially fixed trials: they were sampled, not copied.
assert trials[1].params["lr"] != trials[2].params["lr"]
# skip_if_exists recognises what bfhpo served (by its fixed_params) and what bfhpo enqueued (by its params).
assert trials[6].state == S.WAITING and trials[6].params == {"lr": 0.05, "depth": 6, "kind": "a"}, trials[6]
for again in ({"kind": "b"}, {"lr": 0.02, "depth": 3}, {"lr": 0.05, "depth": 6, "kind": "a"}):
    study.enqueue_trial(again, skip_if_exists=True)
assert len(study.get_trials(deepcopy=False)) == 7, len(study.get_trials(deepcopy=False))
print("optuna", optuna.__version__, "reads", len(asked), "served enqueued trials as bfhpo asked them")
PY
}

check_enqueued_served "$WORK/enq.journal" \
  "optuna.storages.JournalStorage(optuna.storages.JournalFileStorage('$WORK/enq.journal'))"

# `bfhpo optimize` serves a partially fixed trial too: the given value kept, the other param sampled.
write_training_study "$WORK/tiny.json" 2 \
  '"training": {"epochs": 1, "num_batches": 2, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'
"$OPTUNA_PYTHON" - "$WORK/tiny.json.journal" <<'PY' || fail "Optuna could not enqueue into the training study"
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(sys.argv[1]))
optuna.create_study(study_name="tiny", storage=storage).enqueue_trial({"training.learning_rate": 0.004})
PY
"$BFHPO" optimize "$WORK/tiny.json" > "$WORK/optimize.out" 2> "$WORK/optimize.err" || fail "optimize: $(cat "$WORK/optimize.err")"
"$OPTUNA_PYTHON" - "$WORK/tiny.json.journal" <<'PY' || fail "optimize did not serve the enqueued trial: $(cat "$WORK/optimize.err")"
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
trials = optuna.load_study(study_name="tiny", storage=optuna.storages.JournalStorage(
    optuna.storages.JournalFileStorage(sys.argv[1]))).trials
assert [t.state for t in trials] == [optuna.trial.TrialState.COMPLETE] * 2, trials
assert trials[0].params["training.learning_rate"] == 0.004 and "flow.depth" in trials[0].params, trials[0].params
assert trials[1].params["training.learning_rate"] != 0.004, trials[1].params
PY
if [ -n "${BFHPO_TEST_POSTGRES_URL:-}" ]; then
  require_postgres
  URL="$(pg_database enqueue)"
  : > "$WORK/ask.err"
  check_enqueued_served "$URL" "'$URL'"
else
  echo "PostgreSQL part skipped: BFHPO_TEST_POSTGRES_URL is not set; run under scripts/with-postgres"
fi
echo "optuna enqueue: all checks passed"
