# bfhpo enqueue with some of the params (the others sampled when served, as
# Optuna's enqueue_trial), --skip-if-exists with Optuna's rule, and Optuna
# workers and Optuna's own skip_if_exists reading what bfhpo queued.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/demo.json"
write_study "$STUDY" 20
JOURNAL="$STUDY.journal"

# Some params: recorded as Optuna's fixed_params; names the ones to be sampled.
echo '{"lr": 0.003, "kind": "b"}' > "$WORK/partial.json"
out="$("$BFHPO" enqueue "$STUDY" --params "$WORK/partial.json")"
"$OPTUNA_PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d=={"trial":0,"state":"WAITING","sampled_when_served":["depth","heads"]}, d' "$out" \
  || fail "partial enqueue output: $out"
journal_py "$JOURNAL" '
t = trials[0]
assert t.state == TS.WAITING and t.params == {} and t.system_attrs["fixed_params"] == {"lr": 0.003, "kind": "b"}, t
' || fail "Optuna does not see bfhpo's partial enqueue as its own enqueue_trial"

# bfhpo serves it: the fixed values, the rest sampled inside the space.
asked="$("$BFHPO" ask "$STUDY")"
"$OPTUNA_PYTHON" -c '
import json, sys
d = json.loads(sys.argv[1]); p = d["params"]
assert d["trial"] == 0 and p["lr"] == 0.003 and p["kind"] == "b", d
assert 2 <= p["depth"] <= 8 and 1 <= p["heads"] <= 8 and set(p) == {"lr", "depth", "kind", "heads"}, d' "$asked" \
  || fail "the partial trial was not served with its fixed values: $asked"
"$BFHPO" tell "$STUDY" --trial 0 --value "$(objective "$asked")" > /dev/null

# --skip-if-exists: the same params (numbers to numpy.isclose's 1e-5) are found, in any state.
echo '{"lr": 0.0030000001, "kind": "b"}' > "$WORK/near.json"
out="$("$BFHPO" enqueue "$STUDY" --params "$WORK/near.json" --skip-if-exists)"
"$OPTUNA_PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d=={"trial":0,"state":"COMPLETE","skipped":True}, d' "$out" \
  || fail "--skip-if-exists did not find the told trial: $out"
echo '{"lr": 0.004, "kind": "b"}' > "$WORK/other.json"
"$BFHPO" enqueue "$STUDY" --params "$WORK/other.json" --skip-if-exists | grep -q '"trial":1' \
  || fail "--skip-if-exists skipped params no trial has"
"$BFHPO" enqueue "$STUDY" --params "$WORK/other.json" --skip-if-exists | grep -q '"skipped":true' \
  || fail "--skip-if-exists missed a WAITING trial's fixed_params"
"$BFHPO" enqueue "$STUDY" --params "$WORK/other.json" | grep -q '"trial":2' || fail "without the flag the same params queue again"

# A full assignment is recorded as params; skip-if-exists compares with a run trial's params too.
echo '{"lr": 0.02, "depth": 3, "kind": "a"}' > "$WORK/full.json"
out="$("$BFHPO" enqueue "$STUDY" --params "$WORK/full.json")"
case "$out" in *sampled_when_served*) fail "a full assignment names params to sample: $out";; esac
journal_py "$JOURNAL" '
t = trials[3]
assert t.state == TS.WAITING and t.params == {"lr": 0.02, "depth": 3, "kind": "a"}, t
' || fail "the full enqueue is not recorded as the trial's params"

# Optuna (its enqueue_trial with skip_if_exists, and its worker) on what bfhpo queued.
journal_py "$JOURNAL" '
n = len(trials)
study.enqueue_trial({"lr": 0.004, "kind": "b"}, skip_if_exists=True)
study.enqueue_trial({"lr": 0.02, "depth": 3, "kind": "a"}, skip_if_exists=True)
assert len(study.get_trials(deepcopy=False)) == n, "Optuna queued params bfhpo had queued"
t = study.ask()
lr = t.suggest_float("lr", 1e-4, 1e-1, log=True)
kind = t.suggest_categorical("kind", ["a", "b"])
assert t.number == 1 and lr == 0.004 and kind == "b", (t.number, lr, kind)
' || fail "Optuna did not honour bfhpo's queued trials"

# Bad params: exit 2 with the field and a fix, nothing queued.
before="$(wc -l < "$JOURNAL")"
echo '{"lrr": 0.003}' > "$WORK/typo.json"
expect_user_error "did you mean 'lr'" "$BFHPO" enqueue "$STUDY" --params "$WORK/typo.json"
echo '{"kind": "a", "heads": 3}' > "$WORK/inactive.json"
expect_user_error "params.heads" "$BFHPO" enqueue "$STUDY" --params "$WORK/inactive.json"
echo '{"depth": 9}' > "$WORK/range.json"
expect_user_error "outside the parameter's range" "$BFHPO" enqueue "$STUDY" --params "$WORK/range.json"
[ "$(wc -l < "$JOURNAL")" -eq "$before" ] || fail "a refused enqueue wrote to the journal"
echo "enqueue_test: ok"
