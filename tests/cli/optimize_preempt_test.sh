# SIGTERM during a trial (what Slurm sends before a time limit, on preemption
# and on scancel): exit 143, the trial is FAIL "preempted" and re-queued as
# WAITING with the same params, nothing stays RUNNING.
source "$(dirname "$0")/lib.sh"
signal_mid_trial TERM
[ "$MID_TRIAL_RC" -eq 143 ] || fail "expected exit 143 after SIGTERM, got $MID_TRIAL_RC: $(tail -5 "$WORK/first.err")"
expect_one_requeued_trial "preempted (SIGTERM)"
echo "optimize preempt: all checks passed"
