# ask / tell / enqueue / status / export through the CLI, and Optuna reading the journal.
source "$(dirname "$0")/lib.sh"
write_study "$WORK/demo.json" 12

echo '{"lr": 0.003, "depth": 5, "kind": "b", "heads": 4}' > "$WORK/fixed.json"
"$BFHPO" enqueue "$WORK/demo.json" --params "$WORK/fixed.json" | grep -q '"WAITING"' || fail "enqueue"
first="$("$BFHPO" ask "$WORK/demo.json")"
"$OPTUNA_PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["trial"]==0 and d["params"]=={"lr":0.003,"depth":5,"kind":"b","heads":4}, d' "$first" \
  || fail "the enqueued trial was not served first: $first"
"$BFHPO" tell "$WORK/demo.json" --trial 0 --value "$(objective "$first")" > /dev/null

for i in $(seq 1 11); do
  asked="$("$BFHPO" ask "$WORK/demo.json")"
  n="$("$OPTUNA_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["trial"])' "$asked")"
  [ "$n" -eq "$i" ] || fail "trial numbers are not sequential: $asked"
  if [ "$i" -eq 3 ]; then "$BFHPO" tell "$WORK/demo.json" --trial "$n" --state pruned > /dev/null
  elif [ "$i" -eq 4 ]; then "$BFHPO" tell "$WORK/demo.json" --trial "$n" --state fail > /dev/null
  else "$BFHPO" tell "$WORK/demo.json" --trial "$n" --value "$(objective "$asked")" > /dev/null; fi
done

"$BFHPO" status "$WORK/demo.json" > "$WORK/status.txt"
grep -q "12 of 12 trials finished" "$WORK/status.txt" || fail "status: $(cat "$WORK/status.txt")"
"$BFHPO" status "$WORK/demo.json" --json > "$WORK/status.json"
"$BFHPO" export "$WORK/demo.json" --best --format json -o "$WORK/best.json"
"$BFHPO" export "$WORK/demo.json" --format csv > "$WORK/trials.csv"
"$BFHPO" export "$WORK/demo.json" --format json > "$WORK/all.json"
cmp -s <("$OPTUNA_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["trials"])' "$WORK/all.json") \
       <("$OPTUNA_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["trials"])' "$WORK/status.json") \
  || fail "export --format json without --best should list every trial as status --json does"
[ "$(wc -l < "$WORK/trials.csv")" -eq 13 ] || fail "csv rows: $(cat "$WORK/trials.csv")"

"$OPTUNA_PYTHON" - "$WORK" <<'PY'
import csv, json, sys
import optuna
work = sys.argv[1]
study = optuna.load_study(study_name="demo", storage=optuna.storages.JournalStorage(
    optuna.storages.JournalFileStorage(f"{work}/demo.json.journal")))
status = json.load(open(f"{work}/status.json"))
best = json.load(open(f"{work}/best.json"))
trials = study.get_trials(deepcopy=False)
assert len(trials) == 12, len(trials)
S = optuna.trial.TrialState
assert [t.state for t in trials].count(S.COMPLETE) == 10
assert trials[3].state == S.PRUNED and trials[4].state == S.FAIL
for t, row in zip(trials, status["trials"]):
    assert t.number == row["number"] and t.state.name == row["state"], (t, row)
    assert t.params == row["params"], (t.params, row["params"])
    assert t.value == row["value"], (t.value, row["value"])
assert study.best_trial.number == best["trial"] == status["best"]["number"]
assert study.best_value == best["value"] and study.best_params == best["params"]
rows = list(csv.DictReader(open(f"{work}/trials.csv")))
assert [int(r["number"]) for r in rows] == list(range(12))
assert "params_heads" in rows[0] and rows[3]["state"] == "PRUNED"
print("optuna agrees with bfhpo on", len(trials), "trials")
PY
echo "ask/tell: all checks passed"
