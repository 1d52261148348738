# Memory: (1) the gate prunes an enqueued configuration that cannot fit the
# budget at any memory configuration before it allocates anything, and the
# study goes on; (2) with --no-memory-gate a budget below the start
# configuration but above its cheapest chunk makes real (CPU-metered) OOMs
# that the backoff ladder survives; (3) below the cheapest rung it gives up.
source "$(dirname "$0")/lib.sh"

# (1) The gate. Wide per-cell networks and big batches are in the search space.
GATE="$WORK/gate.json"
write_training_study "$GATE" 3 '"memory": {"budget_mb": 24},
 "search_space": {
   "training.batch_size": {"type": "int", "low": 4, "high": 512},
   "summary.cell_mlp_width": {"type": "int", "low": 8, "high": 2048, "log": true}}'
"$BFHPO" enqueue "$GATE" --params <(echo '{"training.batch_size": 512, "summary.cell_mlp_width": 2048}') \
  > "$WORK/enqueued.json"
grep -q '"trial":0' "$WORK/enqueued.json" || fail "enqueue: $(cat "$WORK/enqueued.json")"
# A configuration that fits comes next, so the study's going on does not hang on where the sampler lands.
"$BFHPO" enqueue "$GATE" --params <(echo '{"training.batch_size": 8, "summary.cell_mlp_width": 16}') > /dev/null
"$BFHPO" optimize "$GATE" > "$WORK/gate.out" 2> "$WORK/gate.err" ||
  fail "optimize exited $?: $(tail -5 "$WORK/gate.err")"
grep -q "3/3 finished" "$WORK/gate.out" || fail "summary: $(cat "$WORK/gate.out")"
journal_py "$GATE.journal" '
big = trials[0]
assert big.params == {"training.batch_size": 512, "summary.cell_mlp_width": 2048}, big.params
assert big.state == TS.PRUNED, big.state
reason = big.system_attrs["bfhpo:fail_reason"]
assert reason.startswith("memory"), reason
assert big.system_attrs["bfhpo:measured_peak_mb"] == 0, big.system_attrs["bfhpo:measured_peak_mb"]
assert big.system_attrs["bfhpo:estimated_peak_mb"] > 24, big.system_attrs["bfhpo:estimated_peak_mb"]
assert "bfhpo:weights" not in big.system_attrs
rest = trials[1:]
assert len(rest) == 2 and rest[0].state == TS.COMPLETE, [(t.number, t.state) for t in rest]
print("gate: trial 0 pruned at estimate", round(big.system_attrs["bfhpo:estimated_peak_mb"]), "MB")'

# (2) An OOM demo: 32 items, a wide per-cell network; without the gate every
# trial starts unchunked, runs out of the CPU budget and backs off.
DEMO="$WORK/demo.json"
write_training_study "$DEMO" 2 '"memory": {"budget_mb": 12},
 "simulator": {"model": "2pl", "n_items": 32, "n_persons": 60},
 "approximator": {"summary.cell_dim": 16, "summary.cell_mlp_width": 128, "summary.cell_mlp_depth": 2,
                  "summary.embed_dim": 16, "summary.attention_heads": 2, "summary.attention_layers": 1,
                  "summary.summary_dim": 8, "flow.depth": 2, "flow.subnet_width": 16, "flow.subnet_depth": 1}'
"$BFHPO" optimize "$DEMO" --no-memory-gate > "$WORK/demo.out" 2> "$WORK/demo.err" ||
  fail "optimize --no-memory-gate exited $?: $(tail -5 "$WORK/demo.err")"
grep -q "survived" "$WORK/demo.out" || fail "the summary lists no OOM ladder: $(cat "$WORK/demo.out")"
journal_py "$DEMO.journal" '
import os
survivors = [t for t in trials if t.state == TS.COMPLETE and t.system_attrs["bfhpo:oom_attempts"] > 0]
assert survivors, [(t.number, t.state, t.system_attrs.get("bfhpo:oom_attempts")) for t in trials]
for t in survivors:
    history = t.system_attrs["bfhpo:oom_history"]
    assert len(history) == t.system_attrs["bfhpo:oom_attempts"], history
    assert history[0]["config"] == "batch 8, chunk none", history[0]  # the start configuration
    assert t.system_attrs["bfhpo:estimated_peak_mb"] > 12, t.system_attrs["bfhpo:estimated_peak_mb"]
    assert 0 < t.system_attrs["bfhpo:measured_peak_mb"] <= 12, t.system_attrs["bfhpo:measured_peak_mb"]
    assert t.system_attrs["bfhpo:item_chunk_size"] is not None, t.system_attrs
    assert os.path.isfile(t.system_attrs["bfhpo:weights"])
print("oom demo:", len(survivors), "trials finished through the ladder")'
# The exported best trial retrains with the memory configuration it survived with.
"$BFHPO" export "$DEMO" --best > "$WORK/best.json"
"$BFHPO" train "$DEMO" --params "$WORK/best.json" --epochs 1 --out "$WORK/retrain" --json > "$WORK/train.json" \
  2> "$WORK/train.err" || fail "train rejected the exported config: $(tail -3 "$WORK/train.err")"
"$OPTUNA_PYTHON" - "$WORK" <<'PY' || fail "train did not use the exported memory configuration"
import json, sys
best = json.load(open(f"{sys.argv[1]}/best.json"))
trained = json.load(open(f"{sys.argv[1]}/train.json"))["config"]
assert best["config"]["approximator"]["memory"]["item_chunk_size"] == best["system_attrs"]["bfhpo:item_chunk_size"]
assert trained["approximator"]["memory"] == best["config"]["approximator"]["memory"], trained["approximator"]["memory"]
assert trained["training"]["batch_size"] == best["system_attrs"]["bfhpo:batch_size"], trained["training"]
PY
# (3) A budget below the cheapest rung: the ladder gives up, the trial is FAIL
# "oom" with its history, and the summary does not call that surviving.
EXHAUSTED="$WORK/exhausted.json"
write_training_study "$EXHAUSTED" 1 '"memory": {"budget_mb": 0.05}'
"$BFHPO" optimize "$EXHAUSTED" --no-memory-gate > "$WORK/exhausted.out" 2> "$WORK/exhausted.err" ||
  fail "optimize exited $?: $(tail -5 "$WORK/exhausted.err")"
# The rungs that cut something at 8 items x 60 persons: chunks 4, 2, 1 (16 and 8 and every person chunk
# cut nothing there), then batch 8 -> 4.
grep -q "trial 0 gave up after 5 OOMs: \[batch 8, chunk none\] -> \[batch 8, chunk 4, checkpointing\] -> .* -> FAIL" \
  "$WORK/exhausted.out" || fail "summary: $(cat "$WORK/exhausted.out")"
! grep -q "survived" "$WORK/exhausted.out" || fail "a FAIL trial is said to survive: $(cat "$WORK/exhausted.out")"
journal_py "$EXHAUSTED.journal" '
t = trials[0]
assert t.state == TS.FAIL and t.system_attrs["bfhpo:fail_reason"].startswith("oom"), (t.state, t.system_attrs)
assert t.system_attrs["bfhpo:oom_attempts"] == len(t.system_attrs["bfhpo:oom_history"]) == 5, t.system_attrs'
echo "optimize memory gate: all checks passed"
