# Every IRT model end to end: a tiny study of each (the graded one with missing
# responses) optimizes, its trials record the model's parameters in their
# diagnostics, the best configuration names the model and its priors, and the
# BayesFlow export lists the model's inference variables.
source "$(dirname "$0")/lib.sh"

check_model() {
  local name="$1" simulator="$2" expected="$3"
  local study="$WORK/$name.json"
  write_training_study "$study" 2 "\"simulator\": $simulator"
  printf '%s' "$simulator" > "$WORK/$name.simulator.json"
  "$BFHPO" optimize "$study" > "$WORK/$name.out" 2> "$WORK/$name.err" ||
    fail "$name: optimize exited $?: $(tail -5 "$WORK/$name.err")"
  "$BFHPO" export "$study" --best > "$WORK/$name.best.json" || fail "$name: export --best"
  "$BFHPO" export "$study" --format bayesflow > "$WORK/$name.bayesflow.json" || fail "$name: export bayesflow"
  journal_py "$study.journal" '
names = json.loads(args[0])
complete = [t for t in trials if t.state == TS.COMPLETE]
assert complete, [t.system_attrs.get("bfhpo:fail_reason") for t in trials]
for t in complete:
    diagnostics = t.system_attrs["bfhpo:diagnostics"]  # user attrs hold it flattened for optuna-dashboard
    got = [p["name"] for p in diagnostics["parameters"]]
    assert got == names, (got, names)
best = json.load(open(args[1]))
simulator = json.load(open(args[2]))
config = best["config"]
assert config["simulator"]["model"] == simulator["model"], config["simulator"]
assert config["approximator"]["param_dim"] == len(names), config["approximator"]
bayesflow = json.load(open(args[3]))
assert bayesflow["adapter"]["kwargs"]["inference_variables"] == names, bayesflow["adapter"]
' "$expected" "$WORK/$name.best.json" "$WORK/$name.simulator.json" "$WORK/$name.bayesflow.json"
}

check_model rasch '{"model": "rasch", "n_items": [6, 8], "n_persons": [40, 60]}' '["b"]'
check_model 3pl '{"model": "3pl", "n_items": [6, 8], "n_persons": [40, 60], "priors": {"c": {"alpha": 4, "beta": 16}}}' \
  '["log_a", "b", "logit_c"]'
check_model grm '{"model": "grm", "n_categories": 4, "n_items": [6, 8], "n_persons": [40, 60], "missing": [0, 0.3]}' \
  '["log_a", "b1", "b2", "b3"]'
