# Shared helpers of the CLI tests: a scratch folder, a study file, assertions.
set -euo pipefail
BFHPO="$1"
WORK="$(mktemp -d)"
BG_PIDS=""  # background processes a test started; killed on exit
cleanup() {
  for pid in $BG_PIDS; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
OPTUNA_PYTHON=/usr/bin/python3  # Debian's python3 with python3-optuna

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_user_error NEEDLE COMMAND...: exit 2 and a message with NEEDLE and a fix.
expect_user_error() {
  local needle="$1"; shift
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "expected exit 2, got $rc from: $* ($(cat "$WORK/err"))"
  grep -qF -- "$needle" "$WORK/err" || fail "message lacks '$needle': $(cat "$WORK/err")"
  grep -qF "Fix:" "$WORK/err" || fail "message lacks a fix: $(cat "$WORK/err")"
}

write_study() {  # write_study FILE [N_TRIALS] [EXTRA: more top-level members, e.g. '"storage": "URL",']
  cat > "$1" <<JSON
{"name": "demo", "direction": "minimize", "n_trials": ${2:-20}, "seed": 1, ${3:-}
 "sampler": {"type": "tpe"},
 "search_space": {
   "lr":    {"type": "float", "low": 1e-4, "high": 1e-1, "log": true},
   "depth": {"type": "int", "low": 2, "high": 8},
   "kind":  {"type": "categorical", "choices": ["a", "b"]},
   "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": "b"}}}}
JSON
}

# objective PARAMS_JSON -> a value that depends on every parameter
objective() {
  "$OPTUNA_PYTHON" -c '
import json, math, sys
p = json.loads(sys.argv[1])["params"]
v = (math.log10(p["lr"]) + 2.5) ** 2 + (p["depth"] - 5) ** 2 / 10 + (0.5 if p["kind"] == "a" else 0.1 * abs(p.get("heads", 4) - 4))
print(v)' "$1"
}

# write_training_study FILE N_TRIALS [EXTRA] -> a tiny IRT training study (well under
# a second a trial on CPU). EXTRA: more top-level members, e.g.
# '"memory": {"budget_mb": 64}'; a member named below replaces that default
# (a study file may not give a key twice).
write_training_study() {
  "$OPTUNA_PYTHON" - "$1" "$2" "{${3:-}}" <<'PY'
import json, sys
study = {"name": "tiny", "direction": "minimize", "n_trials": int(sys.argv[2]), "seed": 3,
         "sampler": {"type": "tpe"},
         "simulator": {"model": "2pl", "n_items": [6, 8], "n_persons": [40, 60]},
         "training": {"epochs": 2, "num_batches": 3, "batch_size": 8, "validation_sims": 8, "device": "cpu"},
         "approximator": {"summary.cell_dim": 8, "summary.cell_mlp_width": 16, "summary.cell_mlp_depth": 1,
                          "summary.embed_dim": 16, "summary.attention_heads": 2, "summary.attention_layers": 1,
                          "summary.summary_dim": 8, "flow.depth": 2, "flow.subnet_width": 16, "flow.subnet_depth": 1},
         "search_space": {
             "training.learning_rate": {"type": "float", "low": 1e-4, "high": 1e-2, "log": True},
             "flow.depth": {"type": "int", "low": 1, "high": 3}}}
study.update(json.loads(sys.argv[3]))
with open(sys.argv[1], "w") as f:
    json.dump(study, f, indent=1)
PY
}

# train_small_2pl MODEL_DIR ITEMS PERSONS EPOCHS: `bfhpo train` a small 2PL estimator (ITEMS and
# PERSONS as JSON ranges, e.g. "[6, 10]") on the CPU at a learning rate of 3e-3, into MODEL_DIR.
train_small_2pl() {
  write_training_study "$WORK/small-2pl.json" 1 '"simulator": {"model": "2pl", "n_items": '"$2"', "n_persons": '"$3"'},
  "training": {"epochs": '"$4"', "num_batches": 25, "batch_size": 16, "validation_sims": 8, "device": "cpu",
               "learning_rate": 3e-3},
  "approximator": {"summary.cell_dim": 16, "summary.cell_mlp_width": 32, "summary.cell_mlp_depth": 1,
                   "summary.embed_dim": 32, "summary.attention_heads": 2, "summary.attention_layers": 1,
                   "summary.summary_dim": 8, "flow.depth": 3, "flow.subnet_width": 32, "flow.subnet_depth": 1}'
  "$BFHPO" train "$WORK/small-2pl.json" --out "$1" > "$WORK/train.out" 2>&1 || fail "train: $(tail -3 "$WORK/train.out")"
}

# journal_py JOURNAL SCRIPT [ARGS...]: runs SCRIPT with `study` = the Optuna
# study in JOURNAL (which must load), `trials` its trials, `TS` the states.
journal_py() {
  local journal="$1" script="$2"; shift 2
  "$OPTUNA_PYTHON" - "$journal" "$@" <<PY
import json, sys, warnings, optuna
warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.load_study(study_name=None, storage=optuna.storages.JournalStorage(
    optuna.storages.JournalFileStorage(sys.argv[1])))
trials = study.get_trials(deepcopy=False)
TS = optuna.trial.TrialState
args = sys.argv[2:]
$script
PY
}

# start_workers STUDY N: N `bfhpo optimize STUDY` in the background (output in
# $WORK/workerK.out, .err), their pids in WORKER_PIDS (and BG_PIDS).
start_workers() {
  WORKER_PIDS=()
  for w in $(seq "$2"); do
    "$BFHPO" optimize "$1" > "$WORK/worker$w.out" 2> "$WORK/worker$w.err" &
    WORKER_PIDS+=($!)
    BG_PIDS="$BG_PIDS $!"
  done
}

# wait_for_line FILE PATTERN [SECONDS]: polls until FILE has a line matching PATTERN.
wait_for_line() {
  local deadline=$((SECONDS + ${3:-60}))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no line matching '$2' in $1 after ${3:-60} s"
    sleep 0.05
  done
}

# signal_mid_trial SIGNAL: writes $STUDY ($WORK/tiny.json, 3 trials long
# enough to be caught in the middle), starts `bfhpo optimize` on it (output in
# $WORK/first.out, .err), sends SIGNAL once the first trial reported an epoch,
# and waits for the process; its exit status is in $MID_TRIAL_RC.
signal_mid_trial() {
  STUDY="$WORK/tiny.json"
  write_training_study "$STUDY" 3 \
    '"training": {"epochs": 60, "num_batches": 6, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'
  "$BFHPO" optimize "$STUDY" > "$WORK/first.out" 2> "$WORK/first.err" &
  local pid=$!
  BG_PIDS="$pid"
  wait_for_line "$STUDY.journal" '"intermediate_value"'
  kill "-$1" "$pid"
  MID_TRIAL_RC=0
  wait "$pid" || MID_TRIAL_RC=$?
  BG_PIDS=""
}

# expect_one_requeued_trial REASON_PREFIX: after signal_mid_trial, the
# journal holds one FAIL trial whose reason starts with REASON_PREFIX and one
# WAITING copy of it with the same params, and nothing RUNNING.
expect_one_requeued_trial() {
  journal_py "$STUDY.journal" '
failed = [t for t in trials if t.state == TS.FAIL]
assert len(failed) == 1, [(t.number, t.state) for t in trials]
reason = failed[0].system_attrs["bfhpo:fail_reason"]
assert reason.startswith(args[0]), reason
waiting = [t for t in trials if t.state == TS.WAITING]
assert len(waiting) == 1 and waiting[0].system_attrs["bfhpo:requeued_from"] == failed[0].number, waiting
assert waiting[0].params == failed[0].params
assert not any(t.state == TS.RUNNING for t in trials)
print(reason, ": trial", failed[0].number, "re-queued as", waiting[0].number)' "$1"
}

# PostgreSQL (tests run under scripts/with-postgres, which exports
# BFHPO_TEST_POSTGRES_URL): require_postgres exits 77 (ctest: Skipped) without it.
require_postgres() {
  if [ -z "${BFHPO_TEST_POSTGRES_URL:-}" ]; then
    echo "Skipped: BFHPO_TEST_POSTGRES_URL is not set; run under scripts/with-postgres"
    exit 77
  fi
  PG_DATABASES=""
  trap 'pg_drop_databases; cleanup' EXIT
}
# pg_database NAME -> the URL of a fresh, empty database (dropped on exit).
pg_database() {
  local name="bfhpo_cli_$$_$1"
  psql "$BFHPO_TEST_POSTGRES_URL" -qAt -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" -c "CREATE DATABASE $name" >/dev/null
  PG_DATABASES="$PG_DATABASES $name"
  echo "${BFHPO_TEST_POSTGRES_URL%/*}/$name"
}
pg_drop_databases() {
  for name in $PG_DATABASES; do
    psql "$BFHPO_TEST_POSTGRES_URL" -qAt -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null 2>&1 || true
  done
}
# pg_sql URL SQL -> the rows, fields separated by '|'.
pg_sql() { psql "$1" -qAt -c "$2"; }

# simulate_2pl FILE ITEMS PERSONS SEED: a 2PL data set from the default prior (log a ~ N(0, 0.5), b ~ N(0, 1)),
# with an id column.
simulate_2pl() {
  "$OPTUNA_PYTHON" - "$@" <<'PY'
import sys
import numpy as np
path, items, persons, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(seed)
log_a, b, theta = rng.normal(0, 0.5, items), rng.normal(0, 1, items), rng.normal(0, 1, persons)
y = rng.random((persons, items)) < 1 / (1 + np.exp(-np.exp(log_a) * (theta[:, None] - b)))
with open(path, "w") as f:
    f.write("person_id," + ",".join(f"item{j}" for j in range(items)) + "\n")
    for p in range(persons):
        f.write(f"p{p}," + ",".join(str(int(v)) for v in y[p]) + "\n")
PY
}
