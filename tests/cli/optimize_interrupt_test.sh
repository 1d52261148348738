# SIGINT during a trial: exit 130, the trial is FAIL "interrupted..." and
# re-queued as WAITING, the journal stays valid, and a second run finishes.
source "$(dirname "$0")/lib.sh"
signal_mid_trial INT
[ "$MID_TRIAL_RC" -eq 130 ] || fail "expected exit 130 after SIGINT, got $MID_TRIAL_RC: $(tail -5 "$WORK/first.err")"
grep -q "interrupted" "$WORK/first.out" || fail "summary does not say interrupted: $(cat "$WORK/first.out")"

expect_one_requeued_trial "interrupted (Ctrl-C)"

"$BFHPO" optimize "$STUDY" > "$WORK/second.out" 2> "$WORK/second.err" ||
  fail "second optimize exited $?: $(tail -5 "$WORK/second.err")"
"$BFHPO" status "$STUDY" --json > "$WORK/status.json"
journal_py "$STUDY.journal" '
status = json.load(open(args[0]))
assert status["finished"] == 3, status["counts"]
assert [t.number for t in trials] == list(range(len(trials))) and len(trials) == 4
copy = [t for t in trials if "bfhpo:requeued_from" in t.system_attrs][0]
assert copy.state in (TS.COMPLETE, TS.PRUNED), copy.state
assert not any(t.state in (TS.RUNNING, TS.WAITING) for t in trials)' "$WORK/status.json"
grep -q "(queued)" "$WORK/second.err" || fail "the second run did not take the queued trial: $(cat "$WORK/second.err")"
echo "optimize interrupt: all checks passed"
