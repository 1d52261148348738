# Four bfhpo processes ask/tell 25 trials each on one journal: 100 distinct
# trials, consistent replay, and Optuna reads the result.
source "$(dirname "$0")/lib.sh"
write_study "$WORK/demo.json" 100

worker() {
  for _ in $(seq 1 25); do
    asked="$("$BFHPO" ask "$WORK/demo.json")"
    n="$("$OPTUNA_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["trial"])' "$asked")"
    "$BFHPO" tell "$WORK/demo.json" --trial "$n" --value "$(objective "$asked")" > /dev/null
    echo "$asked" >> "$WORK/asked.$1"
  done
}
for w in 1 2 3 4; do worker "$w" & done
wait

cat "$WORK"/asked.* > "$WORK/all_asked"
[ "$(wc -l < "$WORK/all_asked")" -eq 100 ] || fail "expected 100 asks"
"$BFHPO" status "$WORK/demo.json" --json > "$WORK/status.json"
"$OPTUNA_PYTHON" - "$WORK" <<'PY'
import json, sys
import optuna
work = sys.argv[1]
asked = [json.loads(line) for line in open(f"{work}/all_asked")]
numbers = sorted(a["trial"] for a in asked)
assert numbers == list(range(100)), numbers
status = json.load(open(f"{work}/status.json"))
assert status["finished"] == 100 and status["counts"]["COMPLETE"] == 100, status["counts"]
study = optuna.load_study(study_name="demo", storage=optuna.storages.JournalStorage(
    optuna.storages.JournalFileStorage(f"{work}/demo.json.journal")))
trials = study.get_trials(deepcopy=False)
assert len(trials) == 100 and all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
by_number = {a["trial"]: a["params"] for a in asked}
for t in trials:
    assert t.params == by_number[t.number], (t.number, t.params, by_number[t.number])
assert study.best_trial.number == status["best"]["number"]
print("100 distinct trials from 4 workers; optuna agrees")
PY
echo "four workers: all checks passed"
