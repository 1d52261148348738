# An Optuna worker tells the trial `bfhpo optimize` is training: optimize
# notices at its next report, warns naming the trial, keeps the other
# writer's result (no weights of its own for it), and goes on to its normal
# summary with exit 0.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 2 \
  '"training": {"epochs": 60, "num_batches": 6, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'
"$BFHPO" optimize "$STUDY" > "$WORK/optimize.out" 2> "$WORK/optimize.err" &
PID=$!
BG_PIDS="$PID"
wait_for_line "$STUDY.journal" '"intermediate_value"'
journal_py "$STUDY.journal" '
running = [t for t in trials if t.state == TS.RUNNING]
assert [t.number for t in running] == [0], [(t.number, t.state) for t in trials]
study.tell(running[0].number, 123.0)'
RC=0
wait "$PID" || RC=$?
BG_PIDS=""
[ "$RC" -eq 0 ] || fail "optimize exited $RC: $(tail -5 "$WORK/optimize.err")"
grep -qF "warning: trial 0 was finished by another writer (COMPLETE)" "$WORK/optimize.err" \
  || fail "no warning naming trial 0: $(cat "$WORK/optimize.err")"
grep -q "best" "$WORK/optimize.out" || fail "no summary: $(cat "$WORK/optimize.out")"
journal_py "$STUDY.journal" '
assert [(t.number, t.state) for t in trials] == [(0, TS.COMPLETE), (1, TS.COMPLETE)], [(t.number, t.state) for t in trials]
assert trials[0].value == 123.0, trials[0].value
assert "bfhpo:weights" not in trials[0].system_attrs'
[ ! -e "$STUDY.journal.weights/trial-0.pt" ] || fail "optimize kept weights for the trial it did not record"
echo "optimize told elsewhere: all checks passed"
