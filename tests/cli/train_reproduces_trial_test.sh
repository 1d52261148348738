# Issue 13 part 1: a trial records its seed, threads and memory configuration;
# `export --best` carries them and `train --params best.json` reproduces the
# trial's validation loss (same machine, same threads, CPU) and says so;
# `train --seed S` trains with a new seed and says it is not a reproduction.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 3
"$BFHPO" optimize "$STUDY" > "$WORK/optimize.out" 2> "$WORK/optimize.err" ||
  fail "optimize exited $?: $(tail -5 "$WORK/optimize.err")"
"$BFHPO" export "$STUDY" --best > "$WORK/best.json"

journal_py "$STUDY.journal" '
best = study.best_trial
attrs = best.system_attrs
for t in trials:
    if t.state == TS.COMPLETE:
        assert attrs["bfhpo:seed"] == 3 + best.number, attrs["bfhpo:seed"]
        assert isinstance(attrs["bfhpo:threads"], int) and attrs["bfhpo:threads"] >= 1, attrs
        assert attrs["bfhpo:libtorch"], attrs
exported = json.load(open(args[0]))
w = exported["trained_with"]
assert w["seed"] == attrs["bfhpo:seed"] and w["threads"] == attrs["bfhpo:threads"], w
assert w["validation_loss"] == best.user_attrs["val_nll"], (w, best.user_attrs)
assert exported["config"]["seed"] == attrs["bfhpo:seed"], exported["config"]["seed"]
' "$WORK/best.json"

"$BFHPO" train "$STUDY" --params "$WORK/best.json" --out "$WORK/retrain" --json > "$WORK/train.json" \
  2> "$WORK/train.err" || fail "train exited $?: $(tail -3 "$WORK/train.err")"
"$OPTUNA_PYTHON" - "$WORK/train.json" "$WORK/best.json" <<'PY' || fail "retrained value differs"
import json, sys
result, best = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
expected = best["trained_with"]["validation_loss"]
r = result["reproduction"]
assert r["exact"] and r["obstacles"] == [], r
# The same seed, threads, device and LibTorch run the same float operations in
# the same order: only the printing of the value (17 digits) separates them.
assert abs(result["validation_loss"] - expected) <= 1e-6, (result["validation_loss"], expected)
# Metered as a trial is (on the CPU through the tracking allocator and its cache).
assert result["measured_peak_mb"] > 0, result["measured_peak_mb"]
print(f"train reproduces trial {r['trial']}: {result['validation_loss']!r} vs {expected!r}")
PY
"$BFHPO" train "$STUDY" --params "$WORK/best.json" --out "$WORK/retrain" > "$WORK/train.txt" 2>&1
grep -q "a reproduction" "$WORK/train.txt" || fail "train did not say it reproduces: $(cat "$WORK/train.txt")"
# Issue 39 item 14: the trial's validation loss printed as it is recorded (shortest exact form, not 6 decimals).
"$OPTUNA_PYTHON" - "$WORK/train.txt" "$WORK/best.json" <<'PY' || fail "the trial's loss is not printed exactly"
import json, re, sys
printed = re.search(r"had validation loss (\S+),", open(sys.argv[1]).read()).group(1)
expected = json.load(open(sys.argv[2]))["trained_with"]["validation_loss"]
assert float(printed) == expected and printed == repr(expected), (printed, expected)
PY

# Another seed trains differently, and train says why it is no reproduction.
"$BFHPO" train "$STUDY" --params "$WORK/best.json" --seed 99 --out "$WORK/reseed" > "$WORK/reseed.txt" 2>&1 ||
  fail "train --seed exited $?"
grep -q "not an exact reproduction" "$WORK/reseed.txt" && grep -q "seed 99" "$WORK/reseed.txt" ||
  fail "train --seed 99 did not name the seed: $(cat "$WORK/reseed.txt")"
"$OPTUNA_PYTHON" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["config"]["seed"] == 99 and a["validation_loss"] != b["validation_loss"], (a["validation_loss"], b["validation_loss"])
' "$WORK/retrain/result.json" "$WORK/reseed/result.json" || fail "--seed 99 gave the same run"

# Other threads: still trains, and names the difference.
threads="$(grep -o '"threads": [0-9]*' "$WORK/retrain/result.json" | head -1 | grep -o '[0-9]*$')"
OMP_NUM_THREADS=$((threads + 1)) "$BFHPO" train "$STUDY" --params "$WORK/best.json" --out "$WORK/threads" \
  > "$WORK/threads.txt" 2>&1 || fail "train with other threads exited $?"
grep -q "training threads, the trial had $threads" "$WORK/threads.txt" ||
  fail "other thread count not reported: $(cat "$WORK/threads.txt")"
echo "train_reproduces_trial: all checks passed"
