# What other writers (Optuna scripts, dashboards, other tools) may leave in a
# shared journal, and how bfhpo reads it: a bfhpo:* attribute of another JSON
# type is ignored with one warning (status, report, export never abort); an
# infinite objective value keeps its sign in every output; a WAITING trial
# that enqueue_trial fixed in part shows its fixed params. And a journal path
# that is not a regular file, or a journal another process keeps locked.
source "$(dirname "$0")/lib.sh"
cat > "$WORK/study.json" <<'JSON'
{"name": "demo", "direction": "minimize", "n_trials": 9, "seed": 1, "sampler": {"type": "random"},
 "search_space": {"x": {"type": "float", "low": 0, "high": 1}, "k": {"type": "int", "low": 1, "high": 5}}}
JSON
JOURNAL="$WORK/study.json.journal"
"$OPTUNA_PYTHON" - "$JOURNAL" <<'PY'
import math, sys, warnings, optuna
warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(sys.argv[1]))
study = optuna.create_study(study_name="demo", storage=storage, direction="minimize")
space = {"x": optuna.distributions.FloatDistribution(0, 1), "k": optuna.distributions.IntDistribution(1, 5)}
t = study.ask(space)  # trial 0: bfhpo's attributes written with other types
for key, value in [("bfhpo:requeued_from", "3"), ("bfhpo:seconds", "long"), ("bfhpo:batch_size", "big"),
                   ("bfhpo:gate", 7), ("bfhpo:oom_history", {"a": 1}), ("bfhpo:diagnostics", [1]),
                   ("bfhpo:gradient_checkpointing", "yes"), ("bfhpo:worker", "me"), ("bfhpo:heartbeat", "now"),
                   ("bfhpo:seed", "s"), ("bfhpo:weights", 5)]:
    storage.set_trial_system_attr(t._trial_id, key, value)
study.tell(t, 1.5)
study.tell(study.ask(space), -math.inf)  # trial 1: the best
study.tell(study.ask(space), math.inf)   # trial 2
study.enqueue_trial({"x": 0.25})         # trial 3: WAITING, k left to the sampler
PY

"$BFHPO" status "$WORK/study.json" > "$WORK/status" 2> "$WORK/status.err" || fail "status failed: $(cat "$WORK/status.err")"
grep -qF "warning: trial 0: system attribute bfhpo:requeued_from is \"3\"" "$WORK/status.err" \
  || fail "no warning naming the trial and attribute: $(cat "$WORK/status.err")"
[ "$(grep -c 'bfhpo:requeued_from' "$WORK/status.err")" -eq 1 ] || fail "the warning is not once: $(cat "$WORK/status.err")"
grep -qE '^ +1  COMPLETE +-inf ' "$WORK/status" || fail "status lost trial 1's -inf: $(cat "$WORK/status")"
grep -qF 'best: trial 1 value -inf' "$WORK/status" || fail "status lost the best value: $(cat "$WORK/status")"
grep -E '^ +3  WAITING ' "$WORK/status" | grep -qF '{"x":0.25}' || fail "status hides trial 3's fixed params: $(cat "$WORK/status")"

"$BFHPO" status "$WORK/study.json" --json > "$WORK/status.json" 2> /dev/null || fail "status --json failed"
"$OPTUNA_PYTHON" - "$WORK/status.json" <<'PY' || fail "status --json: $(cat "$WORK/status.json")"
import json, sys
status = json.load(open(sys.argv[1]))
values = [t["value"] for t in status["trials"]]
assert values == [1.5, "-Infinity", "Infinity", None], values
assert status["best"] == {"number": 1, "value": "-Infinity", "params": status["trials"][1]["params"]}, status["best"]
assert status["trials"][3]["params"] == {"x": 0.25}, status["trials"][3]
PY

"$BFHPO" export "$WORK/study.json" --best > "$WORK/best.json" 2> /dev/null || fail "export --best failed"
grep -qF '"value": "-Infinity"' "$WORK/best.json" || fail "export --best lost the value: $(cat "$WORK/best.json")"
"$BFHPO" export "$WORK/study.json" --format csv > "$WORK/trials.csv" 2> /dev/null || fail "export csv failed"
"$OPTUNA_PYTHON" - "$WORK/trials.csv" <<'PY' || fail "export csv: $(cat "$WORK/trials.csv")"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [float(r["value"]) if r["value"] else None for r in rows] == [1.5, -math.inf, math.inf, None], rows
PY
"$BFHPO" report "$WORK/study.json" -o "$WORK/report.html" > /dev/null 2> "$WORK/report.err" \
  || fail "report failed: $(cat "$WORK/report.err")"

# A journal path that names a FIFO: refused at once (a reader used to wait for a writer forever).
mkfifo "$WORK/fifo"
expect_user_error "not a regular file" timeout 20 "$BFHPO" status "$WORK/study.json" --storage "$WORK/fifo"
expect_user_error "not a regular file" timeout 20 "$BFHPO" ask "$WORK/study.json" --storage "$WORK/fifo"

# A process that keeps the journal's flock (as a stopped writer does): a writer says whom it waits for.
"$OPTUNA_PYTHON" -c 'import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' \
  "$JOURNAL" &
HOLDER=$!
BG_PIDS="$HOLDER"
for _ in $(seq 100); do grep -q "FLOCK.* $HOLDER " /proc/locks && break; sleep 0.1; done
"$BFHPO" ask "$WORK/study.json" > "$WORK/ask" 2> "$WORK/ask.err" &
ASKER=$!
BG_PIDS="$HOLDER $ASKER"
for _ in $(seq 100); do grep -q "holds its lock" "$WORK/ask.err" && break; sleep 0.1; done
grep -qF "waiting for the journal $JOURNAL: process $HOLDER (python3" "$WORK/ask.err" \
  || fail "no notice naming the lock's holder: $(cat "$WORK/ask.err")"
kill "$HOLDER"
wait "$ASKER" || fail "ask failed once the lock was free: $(cat "$WORK/ask.err")"
grep -q '"trial":3' "$WORK/ask" || fail "ask did not claim the WAITING trial: $(cat "$WORK/ask")"
echo PASS
