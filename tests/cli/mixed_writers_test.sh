# One journal, four fast writers at once: two Optuna processes (one with
# Optuna's symlink lock, one with its open lock) and two `bfhpo ask`/`tell`
# loops, N trials each. Every told value must be in the journal once, trial
# numbers unique and dense, no writer may fail, Optuna's reader must never
# meet a broken line, and bfhpo must read the whole study.
# OPTUNA_PYTHONPATH=/work/ref/optuna5 runs the Optuna side on another Optuna.
source "$(dirname "$0")/lib.sh"
N="${MIXED_TRIALS:-20}"
export PYTHONPATH="${OPTUNA_PYTHONPATH:-}"
cat > "$WORK/mixed.json" <<JSON
{"name": "mixed", "direction": "minimize", "n_trials": 100000, "seed": 1,
 "sampler": {"type": "random"},
 "search_space": {"x": {"type": "float", "low": -5, "high": 5}}}
JSON
JOURNAL="$WORK/mixed.json.journal"

cat > "$WORK/optuna_worker.py" <<'PY'
import sys
import optuna
from optuna.storages import JournalStorage
path, lock_kind, worker, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    from optuna.storages.journal import JournalFileBackend as Backend, JournalFileOpenLock, JournalFileSymlinkLock
except ImportError:  # Optuna 3.1
    from optuna.storages import JournalFileStorage as Backend, JournalFileOpenLock, JournalFileSymlinkLock
optuna.logging.set_verbosity(optuna.logging.WARNING)
lock = (JournalFileOpenLock if lock_kind == "open" else JournalFileSymlinkLock)(path)
storage = JournalStorage(Backend(path, lock_obj=lock))
if worker == 0 and n == 0:
    optuna.create_study(study_name="mixed", storage=storage, direction="minimize")
    sys.exit(0)
study = optuna.load_study(study_name="mixed", storage=storage, sampler=optuna.samplers.RandomSampler(seed=worker))
with open(out, "w") as told:
    for i in range(n):
        trial = study.ask({"x": optuna.distributions.FloatDistribution(-5, 5)})
        value = 1000.0 * worker + i
        study.tell(trial, value)
        told.write(f"{value}\n")
        told.flush()
PY
"$OPTUNA_PYTHON" "$WORK/optuna_worker.py" "$JOURNAL" symlink 0 0 /dev/null

bfhpo_loop() {  # bfhpo_loop WORKER
  local worker="$1" i asked n
  for i in $(seq 0 $((N - 1))); do
    asked="$("$BFHPO" ask "$WORK/mixed.json")" || { echo "ask failed" >&2; return 1; }
    n="${asked#*\"trial\":}"; n="${n%%[!0-9]*}"
    "$BFHPO" tell "$WORK/mixed.json" --trial "$n" --value "$((1000 * worker + i)).0" > /dev/null \
      || { echo "tell $n failed" >&2; return 1; }
    echo "$((1000 * worker + i)).0" >> "$WORK/told_$worker"
  done
}

pids=()
"$OPTUNA_PYTHON" "$WORK/optuna_worker.py" "$JOURNAL" symlink 1 "$N" "$WORK/told_1" 2> "$WORK/err_1" & pids+=($!)
"$OPTUNA_PYTHON" "$WORK/optuna_worker.py" "$JOURNAL" open 2 "$N" "$WORK/told_2" 2> "$WORK/err_2" & pids+=($!)
bfhpo_loop 3 2> "$WORK/err_3" & pids+=($!)
bfhpo_loop 4 2> "$WORK/err_4" & pids+=($!)
BG_PIDS="${pids[*]}"
status=0
for k in 0 1 2 3; do
  wait "${pids[$k]}" || { status=1; echo "writer $((k + 1)) failed: $(cat "$WORK/err_$((k + 1))")" >&2; }
done
[ "$status" -eq 0 ] || fail "a writer failed"

"$OPTUNA_PYTHON" - "$JOURNAL" "$WORK" "$N" <<'PY'
import json, sys
import optuna
from optuna.storages import JournalStorage
try:
    from optuna.storages.journal import JournalFileBackend as Backend
except ImportError:
    from optuna.storages import JournalFileStorage as Backend
path, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = open(path, "rb").read()
assert raw.endswith(b"\n"), "the journal ends inside a line"
for number, line in enumerate(raw.split(b"\n")[:-1], 1):
    json.loads(line)  # raises on a broken line, naming it
study = optuna.load_study(study_name="mixed", storage=JournalStorage(Backend(path)))
trials = study.get_trials(deepcopy=False)
numbers = [t.number for t in trials]
assert numbers == list(range(len(trials))), "trial numbers are not unique and dense"
told = []
for w in (1, 2, 3, 4):
    told += [float(v) for v in open(f"{work}/told_{w}").read().split()]
assert len(told) == 4 * n, (len(told), 4 * n)
values = sorted(t.value for t in trials if t.state == optuna.trial.TrialState.COMPLETE)
assert values == sorted(told), "told values missing or duplicated: %s" % sorted(set(told) ^ set(values))[:10]
assert len(trials) == 4 * n, ("trials without a told value", [t for t in trials if t.state != optuna.trial.TrialState.COMPLETE][:3])
print(f"{len(trials)} trials from 4 writers, every told value present once")
PY
"$BFHPO" status "$WORK/mixed.json" --json > "$WORK/status.json"
"$OPTUNA_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["finished"] == 4 * int(sys.argv[2]), s["finished"]' \
  "$WORK/status.json" "$N" || fail "bfhpo status does not count every trial"
echo "mixed writers: all checks passed"
