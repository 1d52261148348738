# kill -9 of `bfhpo optimize` in the middle of a trial, then optimize again:
# the killed trial is FAIL ("interrupted: its worker process ... is gone"), a
# WAITING copy with its params runs, and the study ends with exactly n_trials
# finished trials, no trial number lost or duplicated.
source "$(dirname "$0")/lib.sh"
signal_mid_trial KILL
[ "$MID_TRIAL_RC" -eq 137 ] || fail "expected exit 137 after kill -9, got $MID_TRIAL_RC"

# What the kill left: one RUNNING trial with a reported epoch.
killed="$(journal_py "$STUDY.journal" '
running = [t for t in trials if t.state == TS.RUNNING]
assert len(running) == 1, [(t.number, t.state) for t in trials]
assert running[0].intermediate_values, "the kill came before the first epoch report"
print(running[0].number)')"

"$BFHPO" optimize "$STUDY" > "$WORK/second.out" 2> "$WORK/second.err" ||
  fail "resumed optimize exited $?: $(tail -5 "$WORK/second.err")"
"$BFHPO" status "$STUDY" --json > "$WORK/status.json"
journal_py "$STUDY.journal" '
killed, work = int(args[0]), args[1]
status = json.load(open(f"{work}/status.json"))
assert status["finished"] == 3, status["counts"]
assert [t.number for t in trials] == list(range(len(trials))), [t.number for t in trials]
assert len(trials) == 4, [(t.number, t.state) for t in trials]  # 3 finished + the killed one
dead = trials[killed]
assert dead.state == TS.FAIL, dead.state
reason = dead.system_attrs["bfhpo:fail_reason"]
assert "interrupted" in reason and "worker" in reason, reason
copies = [t for t in trials if t.system_attrs.get("bfhpo:requeued_from") == killed]
assert len(copies) == 1, [t.system_attrs for t in trials]
assert copies[0].params == dead.params and copies[0].state in (TS.COMPLETE, TS.PRUNED), copies[0]
assert all(t.state != TS.RUNNING and t.state != TS.WAITING for t in trials)
print("resume: trial", killed, "killed, re-run as trial", copies[0].number)
' "$killed" "$WORK"
grep -q "3/3 finished" "$WORK/second.out" || fail "summary: $(cat "$WORK/second.out")"
echo "optimize resume: all checks passed"
