# A full disk while a trial's weights are saved (a small tmpfs on the weights
# folder, or where mounting is not allowed a file-size limit): that trial is
# FAIL with the reason and its params re-queued, optimize exits 2, no partial
# .pt or temporary file is left and no trial stays RUNNING; once there is
# room, the study resumes and finishes.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 2
WEIGHTS="$STUDY.journal.weights"
mkdir -p "$WEIGHTS"
if mount -t tmpfs -o size=8k tmpfs "$WEIGHTS" 2>/dev/null; then
  trap 'umount "$WEIGHTS" 2>/dev/null || true; cleanup' EXIT
  full_disk() { "$@"; }
  free_space() { umount "$WEIGHTS"; }
else  # a limit below the weights' size and above the journal's; SIGXFSZ ignored, so write() fails (EFBIG)
  full_disk() { (trap '' XFSZ; ulimit -f 24; exec "$@"); }
  free_space() { :; }
fi

rc=0
full_disk "$BFHPO" optimize "$STUDY" > "$WORK/out" 2> "$WORK/err" || rc=$?
[ "$rc" -eq 2 ] || fail "expected exit 2 on a full disk, got $rc: $(cat "$WORK/err")"
grep -qE "No space left on device|File too large" "$WORK/err" || fail "the error lacks the system's reason: $(cat "$WORK/err")"
grep -qF "Fix:" "$WORK/err" || fail "the error lacks a fix: $(cat "$WORK/err")"
leftovers="$(find "$WEIGHTS" -type f)"
[ -z "$leftovers" ] || fail "a full disk left files behind: $leftovers"
journal_py "$STUDY.journal" '
reason = trials[0].system_attrs.get("bfhpo:fail_reason", "")
assert trials[0].state == TS.FAIL and "cannot save the weights" in reason, (trials[0].state, reason)
assert trials[1].state == TS.WAITING and trials[1].params == trials[0].params, trials[1]
assert not [t for t in trials if t.state == TS.RUNNING], [t.number for t in trials]
assert len(trials) == 2, len(trials)'

free_space
"$BFHPO" optimize "$STUDY" > "$WORK/out" 2> "$WORK/err" || fail "the resumed study failed: $(cat "$WORK/err")"
journal_py "$STUDY.journal" '
done = [t for t in trials if t.state == TS.COMPLETE]
assert len(done) == 2 and done[0].params == trials[0].params, [(t.number, t.state) for t in trials]
for t in done:
    import os
    assert os.path.getsize(t.system_attrs["bfhpo:weights"]) > 0'
echo "full disk: all checks passed"
