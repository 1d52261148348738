# Studies of several objectives and constraints (issue 27 parts 1, 3, 5):
# stored as Optuna stores them, so Optuna sees the directions, the metric
# names and bfhpo's Pareto front; Optuna workers' trials (values lists, the
# "constraints" attribute) count in bfhpo's front; bad input exits 2 and
# writes nothing. On the journal, and on PostgreSQL under scripts/with-postgres.
source "$(dirname "$0")/lib.sh"

write_mo_study() {  # write_mo_study FILE NAME [EXTRA top-level members]
  cat > "$1" <<JSON
{"name": "$2", "n_trials": 40, "seed": 2, ${3:-}
 "objectives": [{"metric": "f1", "direction": "minimize"}, {"metric": "f2", "direction": "maximize"}],
 "search_space": {"x": {"type": "float", "low": 0, "high": 1},
                  "y": {"type": "float", "low": 0, "high": 1},
                  "k": {"type": "categorical", "choices": ["p", "q"]}}}
JSON
}
# f1 = x + small, f2 = (1 - x)^2-ish trade-off, maximized as its negative: a real front.
values_of() {
  "$OPTUNA_PYTHON" -c '
import json, sys
p = json.loads(sys.argv[1])["params"]
f1 = p["x"] + 0.1 * p["y"] + (0.05 if p["k"] == "q" else 0.0)
f2 = -((1 - p["x"]) ** 2) - 0.1 * p["y"]
print(f"{f1!r},{f2!r}")' "$1"
}

# run_checks STORAGE_MEMBER OPTUNA_STORAGE_PYTHON_EXPR
run_checks() {
  local extra="$1" storage_expr="$2"
  write_mo_study "$WORK/mo.json" "mo" "$extra \"constraints\": [\"f1 <= 0.8\"],"
  write_mo_study "$WORK/free.json" "free" "$extra"

  # Bad tells: the wrong count of values, a single --value, values on a failed trial: exit 2, nothing written.
  asked="$("$BFHPO" ask "$WORK/mo.json")"
  snapshot="$("$BFHPO" export "$WORK/mo.json" --format csv)"
  expect_user_error "needs 2 values" "$BFHPO" tell "$WORK/mo.json" --trial 0 --values 1.0
  expect_user_error "needs 2 values" "$BFHPO" tell "$WORK/mo.json" --trial 0 --value 1.0
  expect_user_error "takes no value" "$BFHPO" tell "$WORK/mo.json" --trial 0 --values 1,2 --state fail
  expect_user_error "no intermediate values" "$BFHPO" tell "$WORK/mo.json" --trial 0 --step 1 --value 1
  [ "$("$BFHPO" export "$WORK/mo.json" --format csv)" = "$snapshot" ] || fail "a refused tell changed the study"
  "$BFHPO" tell "$WORK/mo.json" --trial 0 --values "$(values_of "$asked")" > /dev/null

  for study in mo free; do
    for i in $(seq 1 15); do
      asked="$("$BFHPO" ask "$WORK/$study.json")"
      n="$("$OPTUNA_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["trial"])' "$asked")"
      "$BFHPO" tell "$WORK/$study.json" --trial "$n" --values "$(values_of "$asked")" > /dev/null
    done
  done

  # Optuna workers add trials to both studies: values lists, and constraints from NSGA-II's constraints_func.
  "$OPTUNA_PYTHON" - "$storage_expr" <<'PY'
import sys, warnings, optuna
warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = eval(sys.argv[1])
def objective(trial):
    x = trial.suggest_float("x", 0, 1); y = trial.suggest_float("y", 0, 1)
    k = trial.suggest_categorical("k", ["p", "q"])
    f1 = x + 0.1 * y + (0.05 if k == "q" else 0.0)
    trial.set_user_attr("f1", f1)
    return f1, -((1 - x) ** 2) - 0.1 * y
sampler = optuna.samplers.NSGAIISampler(seed=4, constraints_func=lambda t: (t.user_attrs["f1"] - 0.8,))
optuna.load_study(study_name="mo", storage=storage, sampler=sampler).optimize(objective, n_trials=6)
optuna.load_study(study_name="free", storage=storage,
                  sampler=optuna.samplers.RandomSampler(seed=5)).optimize(objective, n_trials=6)
PY

  # Once more from bfhpo, its sampler seeing the Optuna trials too.
  for i in 1 2; do
    asked="$("$BFHPO" ask "$WORK/mo.json")"
    n="$("$OPTUNA_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["trial"])' "$asked")"
    "$BFHPO" tell "$WORK/mo.json" --trial "$n" --values "$(values_of "$asked")" > /dev/null
  done

  "$BFHPO" status "$WORK/mo.json" --json > "$WORK/mo-status.json"
  "$BFHPO" status "$WORK/free.json" --json > "$WORK/free-status.json"
  "$BFHPO" status "$WORK/mo.json" > "$WORK/mo-status.txt"
  grep -q "Pareto front (minimize f1, maximize f2)" "$WORK/mo-status.txt" || fail "status: $(cat "$WORK/mo-status.txt")"
  grep -q "f1 <= 0.8" "$WORK/mo-status.txt" || fail "status does not state the constraint: $(head -2 "$WORK/mo-status.txt")"
  # No column that no trial has a value in (an external study: time, batch, chunk, peaks); each row's params under the header's.
  sed -n 2p "$WORK/mo-status.txt" | grep -qE "time|batch|chunk|MB" && fail "status: empty columns: $(sed -n 2p "$WORK/mo-status.txt")"
  "$OPTUNA_PYTHON" - "$WORK/mo-status.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
at = lines[1].index("params")
rows = [l for l in lines[2:] if l[:6].strip().isdigit()]
assert rows and all(l[at] == "{" and l[at - 1] == " " for l in rows), "\n".join(lines[1:6])
PY
  "$BFHPO" report "$WORK/mo.json" -o "$WORK/mo.html" 2> /dev/null
  grep -q "Best trial" "$WORK/mo.html" && fail "the report heads a study of two objectives with one best trial"
  "$BFHPO" export "$WORK/mo.json" --format csv > "$WORK/mo.csv"
  head -1 "$WORK/mo.csv" | grep -q "^number,state,values_f1,values_f2,datetime_start" || fail "csv header: $(head -1 "$WORK/mo.csv")"
  expect_user_error "front" "$BFHPO" export "$WORK/mo.json" --best
  grep -qF -- "--trial" "$WORK/err" && fail "export suggests an option it does not take: $(cat "$WORK/err")"

  "$OPTUNA_PYTHON" - "$storage_expr" "$WORK" <<'PY'
import json, sys, warnings, optuna
from optuna.study._multi_objective import _get_pareto_front_trials_by_trials
warnings.simplefilter("ignore")
storage, work = eval(sys.argv[1]), sys.argv[2]
D = optuna.study.StudyDirection
for name, constrained in (("mo", True), ("free", False)):
    study = optuna.load_study(study_name=name, storage=storage)
    status = json.load(open(f"{work}/{name}-status.json"))
    assert study.directions == [D.MINIMIZE, D.MAXIMIZE], study.directions
    assert study.system_attrs["study:metric_names"] == ["f1", "f2"], study.system_attrs
    trials = study.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(complete) == (24 if constrained else 21), len(complete)
    for t, row in zip(trials, status["trials"]):
        assert t.number == row["number"] and t.state.name == row["state"], (t, row)
        assert t.values == row["values"], (t.values, row["values"])
    if constrained:
        cons = {t.number: t.system_attrs.get("constraints") for t in complete}
        assert all(c is not None and len(c) == 1 for c in cons.values()), cons  # bfhpo's and Optuna's trials
        for t in complete:
            assert abs(cons[t.number][0] - (t.values[0] - 0.8)) < 1e-12, (t.number, cons[t.number], t.values)
        feasible = [t for t in complete if cons[t.number][0] <= 0]
        assert 0 < len(feasible) < len(complete), "the test needs feasible and infeasible trials"
        expected = _get_pareto_front_trials_by_trials(feasible, study.directions)
    else:
        expected = study.best_trials  # Optuna's own front
    got = [t["number"] for t in status["best_trials"]]
    assert sorted(t.number for t in expected) == got, (sorted(t.number for t in expected), got)
    assert len(got) >= 2, got
print("optuna agrees with bfhpo's fronts")
PY
}

# Both studies in one journal, as in Optuna.
run_checks '"storage": "shared.journal",' "optuna.storages.JournalStorage(optuna.storages.JournalFileStorage('$WORK/shared.journal'))"
echo "journal: checks passed"

# --- bad study files: exit 2, no journal written ---
bad() {  # bad NEEDLE JSON
  echo "$2" > "$WORK/bad.json"
  rm -f "$WORK/bad.json.journal"
  expect_user_error "$1" "$BFHPO" ask "$WORK/bad.json"
  [ ! -e "$WORK/bad.json.journal" ] || fail "a refused study file wrote a journal"
}
space='"search_space": {"x": {"type": "float", "low": 0, "high": 1}}'
bad "direction" '{"name": "b", "objectives": [{"metric": "f1", "direction": "minimise"}], '"$space"'}'
bad "given beside \"objectives\"" '{"name": "b", "direction": "minimize", "objectives": [{"metric": "f1", "direction": "minimize"}], '"$space"'}'
bad "already an objective" '{"name": "b", "objectives": [{"metric": "f1", "direction": "minimize"}, {"metric": "f1", "direction": "maximize"}], '"$space"'}'
bad "did you mean 'objectives[0].direction'" '{"name": "b", "objectives": [{"metric": "f1", "directon": "minimize"}], '"$space"'}'
bad "never reports" '{"name": "b", "objectives": [{"metric": "f1", "direction": "minimize"}], "constraints": ["f3 <= 1"], '"$space"'}'
bad "not a plain decimal" '{"name": "b", "objectives": [{"metric": "f1", "direction": "minimize"}], "constraints": ["f1 <= 0x10"], '"$space"'}'
bad "metric <= number" '{"name": "b", "objectives": [{"metric": "f1", "direction": "minimize"}], "constraints": ["f1 < 1"], '"$space"'}'
bad "cannot prune" '{"name": "b", "objectives": [{"metric": "f1", "direction": "minimize"}, {"metric": "f2", "direction": "minimize"}], "pruner": {"type": "median"}, '"$space"'}'
write_training_study "$WORK/badtrain.json" 2 '"direction": null, "objectives": [{"metric": "val_nl", "direction": "minimize"}]'
"$OPTUNA_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("direction"); json.dump(d, open(sys.argv[1], "w"))' "$WORK/badtrain.json"
expect_user_error "did you mean 'val_nll'" "$BFHPO" optimize "$WORK/badtrain.json"
# The other verbs refuse it as optimize does.
expect_user_error "did you mean 'val_nll'" "$BFHPO" ask "$WORK/badtrain.json"
expect_user_error "did you mean 'val_nll'" "$BFHPO" tell "$WORK/badtrain.json" --trial 0 --value 1
expect_user_error "did you mean 'val_nll'" "$BFHPO" status "$WORK/badtrain.json"
expect_user_error "did you mean 'val_nll'" "$BFHPO" report "$WORK/badtrain.json"
expect_user_error "did you mean 'val_nll'" "$BFHPO" export "$WORK/badtrain.json" --best
[ ! -e "$WORK/badtrain.json.journal" ] || fail "a refused training study wrote a journal"
echo "bad input: checks passed"

# --- constraint values: computed from the study's constraints, else each trial's own from tell ---
trial_of() { "$OPTUNA_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["trial"])' "$1"; }
cat > "$WORK/c.json" <<JSON
{"name": "c", "objectives": [{"metric": "loss", "direction": "minimize"}], "constraints": ["loss <= 1"],
 $space}
JSON
n="$(trial_of "$("$BFHPO" ask "$WORK/c.json")")"
expect_user_error "would replace them" "$BFHPO" tell "$WORK/c.json" --trial "$n" --value 2 --constraints -1
"$BFHPO" tell "$WORK/c.json" --trial "$n" --value 2 > /dev/null
"$BFHPO" status "$WORK/c.json" --json > "$WORK/c-status.json"
"$OPTUNA_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["best"] is None and s["trials"][0]["system_attrs"]["constraints"] == [1.0], s' "$WORK/c-status.json"
write_mo_study "$WORK/own.json" "own"
n="$(trial_of "$("$BFHPO" ask "$WORK/own.json")")"
"$BFHPO" tell "$WORK/own.json" --trial "$n" --values 0.5,-0.5 --constraints -1,2 > /dev/null
n="$(trial_of "$("$BFHPO" ask "$WORK/own.json")")"
expect_user_error "has 2 constraint values, got 1" "$BFHPO" tell "$WORK/own.json" --trial "$n" --values 0.5,-0.5 --constraints -1
expect_user_error "FAIL trial records no constraint values" "$BFHPO" tell "$WORK/own.json" --trial "$n" --state fail --constraints 1,1
expect_user_error "NaN" "$BFHPO" tell "$WORK/own.json" --trial "$n" --values 0.5,-0.5 --constraints nan,1
expect_user_error "last tell" "$BFHPO" tell "$WORK/own.json" --trial "$n" --step 1 --value 1 --constraints 1
"$BFHPO" tell "$WORK/own.json" --trial "$n" --state pruned --constraints inf,-inf > /dev/null
journal_py "$WORK/own.json.journal" '
assert [t.state for t in trials] == [TS.COMPLETE, TS.PRUNED], trials
assert trials[0].system_attrs["constraints"] == [-1, 2], trials[0].system_attrs
assert trials[1].system_attrs["constraints"] == [float("inf"), float("-inf")], trials[1].system_attrs'
echo "constraint values: checks passed"

# --- a training study: the memory frontier as objectives, a constraint on calibration ---
write_training_study "$WORK/train.json" 4 '"direction": null, "objectives": [{"metric": "val_nll", "direction": "minimize"},
  {"metric": "measured_peak_mb", "direction": "minimize"}], "constraints": ["calibration_error <= 0.9"]'
"$OPTUNA_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("direction"); json.dump(d, open(sys.argv[1], "w"))' "$WORK/train.json"
"$BFHPO" optimize "$WORK/train.json" > "$WORK/train.out" 2>&1 || fail "optimize: $(tail -5 "$WORK/train.out")"
grep -q "Pareto front (minimize val_nll, minimize measured_peak_mb)" "$WORK/train.out" || fail "summary: $(tail -20 "$WORK/train.out")"
"$BFHPO" status "$WORK/train.json" --json > "$WORK/train-status.json"
"$BFHPO" report "$WORK/train.json" -o "$WORK/train.html" > /dev/null
grep -q "<h2>Pareto front</h2>" "$WORK/train.html" || fail "the report draws no Pareto front"
"$BFHPO" export "$WORK/train.json" --best --budget-mb 100000 -o "$WORK/best.json" > /dev/null
journal_py "$WORK/train.json.journal" '
status = json.load(open(args[0])); best = json.load(open(args[1]))
assert study.system_attrs["study:metric_names"] == ["val_nll", "measured_peak_mb"], study.system_attrs
complete = [t for t in trials if t.state == TS.COMPLETE]
assert complete, [t.state for t in trials]
for t in complete:
    assert t.values[0] == t.user_attrs["val_nll"], (t.values, t.user_attrs)
    assert t.values[1] == t.system_attrs["bfhpo:measured_peak_mb"], (t.values, t.system_attrs)
    assert abs(t.system_attrs["constraints"][0] - (t.user_attrs["calibration_error"] - 0.9)) < 1e-12
    assert t.intermediate_values == {}, t.intermediate_values  # Optuna refuses report() with several objectives
front = [t["number"] for t in status["best_trials"]]
assert front == sorted(t.number for t in study.best_trials), (front, study.best_trials)
feasible = [t for t in complete if t.system_attrs["constraints"][0] <= 0]
assert best["trial"] == min(feasible, key=lambda t: t.values[0]).number, best["trial"]
print("training study: optuna agrees")
' "$WORK/train-status.json" "$WORK/best.json"
# Its constraint names a metric only training measures: a trial told its values cannot complete.
n="$(trial_of "$("$BFHPO" ask "$WORK/train.json")")"
expect_user_error "only bfhpo optimize" "$BFHPO" tell "$WORK/train.json" --trial "$n" --values 1,2
"$BFHPO" tell "$WORK/train.json" --trial "$n" --state fail > /dev/null
echo "training study: checks passed"

# A training study whose every COMPLETE trial misses its constraint: no best, and export says none is feasible.
write_training_study "$WORK/none.json" 1 '"constraints": ["calibration_error >= 100"]'
"$BFHPO" optimize "$WORK/none.json" > "$WORK/none.out" 2>&1 || fail "optimize: $(tail -5 "$WORK/none.out")"
expect_user_error "none is feasible" "$BFHPO" export "$WORK/none.json" --best --budget-mb 100000
expect_user_error "none is feasible" "$BFHPO" export "$WORK/none.json" --best
grep -qF "calibration_error >= 100" "$WORK/err" || fail "the message does not name the constraint: $(cat "$WORK/err")"
"$BFHPO" report "$WORK/none.json" -o "$WORK/none.html" 2> /dev/null
grep -qF "No COMPLETE trial meets the constraints yet" "$WORK/none.html" || fail "the report does not say none is feasible"

if [ -n "${BFHPO_TEST_POSTGRES_URL:-}" ]; then
  PG_DATABASES=""
  trap 'pg_drop_databases; cleanup' EXIT
  url="$(pg_database mo)"
  # bfhpo creates Optuna's v3.2.0.a schema, which Debian's Optuna 3.1 opens only without its version check.
  run_checks "\"storage\": \"$url\"," "optuna.storages.RDBStorage('$url', skip_compatibility_check=True)"
  echo "postgresql: checks passed"
fi
echo "multi-objective: all checks passed"
