# Three `bfhpo optimize` workers on one journal; one is killed with kill -9
# in the middle of a trial. The survivors wait for it, find its process gone,
# fail its trial and re-queue its params, and finish the study: n_trials
# finished, the killed trial FAIL with its params run again, Optuna reads it.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 6 '"training": {"epochs": 40, "num_batches": 3, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'

pids=()
for w in 1 2 3; do
  "$BFHPO" optimize "$STUDY" > "$WORK/w$w.out" 2> "$WORK/w$w.err" & pids+=($!)
done
BG_PIDS="${pids[*]}"
victim="${pids[0]}"
# kill -9 worker 1 once it has a RUNNING trial of its own in the journal
for _ in $(seq 1 600); do
  if grep -q "\"pid\": *$victim\b" "$STUDY.journal" 2>/dev/null; then break; fi
  sleep 0.05
done
grep -q "\"pid\": *$victim\b" "$STUDY.journal" || fail "worker 1 never started a trial"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
for k in 1 2; do
  wait "${pids[$k]}" || fail "worker $((k + 1)) exited $?: $(tail -5 "$WORK/w$((k + 1)).err")"
done
BG_PIDS=""

"$BFHPO" status "$STUDY" --json > "$WORK/status.json"
journal_py "$STUDY.journal" '
work, victim = args[0], int(args[1])
status = json.load(open(f"{work}/status.json"))
killed = [t for t in trials if t.system_attrs.get("bfhpo:worker", {}).get("pid") == victim]
assert killed, "no trial of the killed worker"
for t in killed:
    assert t.state in (TS.FAIL, TS.COMPLETE, TS.PRUNED), (t.number, t.state)
failed = [t for t in killed if t.state == TS.FAIL]
assert failed, "the killed worker'"'"'s trial was not failed by a survivor"
copies = {t.system_attrs.get("bfhpo:requeued_from"): t for t in trials if "bfhpo:requeued_from" in t.system_attrs}
for t in failed:
    copy = copies.get(t.number)
    assert copy is not None, f"trial {t.number} not re-queued"
    assert copy.params == t.params, (copy.params, t.params)
    assert copy.state in (TS.COMPLETE, TS.PRUNED, TS.FAIL), copy.state
assert not [t for t in trials if t.state in (TS.RUNNING, TS.WAITING)], [(t.number, t.state) for t in trials]
assert status["finished"] == 6, status
print("killed worker'"'"'s trials", [t.number for t in failed], "re-run as", [copies[t.number].number for t in failed])
' "$WORK" "$victim"
echo "optimize worker killed: all checks passed"
