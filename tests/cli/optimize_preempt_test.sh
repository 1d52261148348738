# SIGTERM during a trial (what Slurm sends before a time limit, on preemption
# and on scancel): exit 143, the trial is FAIL "preempted" and re-queued as
# WAITING with the same params, nothing stays RUNNING.
source "$(dirname "$0")/lib.sh"
signal_mid_trial TERM
[ "$MID_TRIAL_RC" -eq 143 ] || fail "expected exit 143 after SIGTERM, got $MID_TRIAL_RC: $(tail -5 "$WORK/first.err")"
journal_py "$STUDY.journal" '
failed = [t for t in trials if t.state == TS.FAIL]
assert len(failed) == 1, [(t.number, t.state) for t in trials]
reason = failed[0].system_attrs["bfhpo:fail_reason"]
assert reason.startswith("preempted (SIGTERM)"), reason
waiting = [t for t in trials if t.state == TS.WAITING]
assert len(waiting) == 1 and waiting[0].system_attrs["bfhpo:requeued_from"] == failed[0].number, waiting
assert waiting[0].params == failed[0].params
assert not any(t.state == TS.RUNNING for t in trials)
print("preempt: trial", failed[0].number, "re-queued as", waiting[0].number)'
echo "optimize preempt: all checks passed"
