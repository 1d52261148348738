# A tiny training study end to end: optimize, status, Optuna reads the journal,
# every export, the best configuration retrains, and a finished study stays finished.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 4

"$BFHPO" optimize "$STUDY" > "$WORK/optimize.out" 2> "$WORK/optimize.err" ||
  fail "optimize exited $?: $(tail -5 "$WORK/optimize.err")"
grep -q "4/4 finished" "$WORK/optimize.out" || fail "summary: $(cat "$WORK/optimize.out")"
"$BFHPO" status "$STUDY" --json > "$WORK/status.json"
"$BFHPO" export "$STUDY" --best > "$WORK/best.json"
"$BFHPO" export "$STUDY" --format csv > "$WORK/trials.csv"
"$BFHPO" export "$STUDY" --format bayesflow > "$WORK/bayesflow.json"

journal_py "$STUDY.journal" '
import csv, os
work = args[0]
status = json.load(open(f"{work}/status.json"))
assert status["n_trials"] == 4 and status["finished"] == 4, status["counts"]
assert len(trials) == 4 and [t.number for t in trials] == [0, 1, 2, 3]
assert all(t.state in (TS.COMPLETE, TS.PRUNED) for t in trials), [t.state for t in trials]
complete = [t for t in trials if t.state == TS.COMPLETE]
assert complete, "no COMPLETE trial"
best = study.best_trial
assert best.number == status["best"]["number"], (best.number, status["best"])
assert abs(best.value - status["best"]["value"]) < 1e-12, (best.value, status["best"])
assert best.params == status["best"]["params"], (best.params, status["best"]["params"])
for t in complete:
    w = t.system_attrs["bfhpo:weights"]
    assert os.path.isfile(w) and os.path.getsize(w) > 0, (t.number, w)
    assert "val_nll" in t.user_attrs and "bfhpo:diagnostics" in t.system_attrs, t.user_attrs.keys()

exported = json.load(open(f"{work}/best.json"))
assert exported["trial"] == best.number and exported["params"] == best.params, exported
assert exported["weights"] == best.system_attrs["bfhpo:weights"]
cfg = exported["config"]
assert set(cfg) >= {"simulator", "training", "approximator"}, cfg.keys()
assert cfg["approximator"]["flow"]["depth"] == best.params["flow.depth"], cfg["approximator"]["flow"]
assert cfg["training"]["learning_rate"] == best.params["training.learning_rate"], cfg["training"]

rows = list(csv.DictReader(open(f"{work}/trials.csv")))
assert [int(r["number"]) for r in rows] == [0, 1, 2, 3], rows
assert [r["state"] for r in rows] == [t.state.name for t in trials], [r["state"] for r in rows]

bf = json.load(open(f"{work}/bayesflow.json"))
assert {"summary_network", "inference_network", "training"} <= set(bf), bf.keys()
assert bf["inference_network"]["kwargs"]["depth"] == best.params["flow.depth"], bf["inference_network"]
assert bf["bfhpo"]["trial"] == best.number
print("optimize: 4 trials, optuna agrees on best trial", best.number)
' "$WORK"

# The exported best configuration retrains.
"$BFHPO" train "$STUDY" --params "$WORK/best.json" --epochs 1 --out "$WORK/retrain" --json > "$WORK/train.json" \
  2> "$WORK/train.err" || fail "train rejected the exported config: $(tail -3 "$WORK/train.err")"
[ -s "$WORK/retrain/weights.pt" ] || fail "train wrote no weights"
"$OPTUNA_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["epochs_completed"] == 1 and r["config"]["training"]["epochs"] == 1, r["epochs_completed"]' "$WORK/train.json" || fail "train result: $(cat "$WORK/train.json")"

# A finished study: optimize again starts nothing and writes nothing.
before="$(sha256sum < "$STUDY.journal")"
"$BFHPO" optimize "$STUDY" > "$WORK/again.out" 2> "$WORK/again.err" || fail "second optimize exited $?"
[ "$before" = "$(sha256sum < "$STUDY.journal")" ] || fail "optimize on a finished study changed the journal"
grep -q "this run: 0 trials" "$WORK/again.out" || fail "second run: $(cat "$WORK/again.out")"
echo "optimize: all checks passed"
