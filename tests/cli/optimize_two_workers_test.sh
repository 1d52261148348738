# Two `bfhpo optimize` processes on one journal finish n_trials between them:
# exactly n_trials finished, none more, distinct trial numbers, Optuna reads it.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 6

"$BFHPO" optimize "$STUDY" > "$WORK/w1.out" 2> "$WORK/w1.err" & p1=$!
"$BFHPO" optimize "$STUDY" > "$WORK/w2.out" 2> "$WORK/w2.err" & p2=$!
BG_PIDS="$p1 $p2"
wait "$p1" || fail "worker 1 exited $?: $(tail -5 "$WORK/w1.err")"
wait "$p2" || fail "worker 2 exited $?: $(tail -5 "$WORK/w2.err")"
BG_PIDS=""

"$BFHPO" status "$STUDY" --json > "$WORK/status.json"
journal_py "$STUDY.journal" '
import re
work = args[0]
status = json.load(open(f"{work}/status.json"))
numbers = [t.number for t in trials]
assert numbers == list(range(len(numbers))), numbers
assert status["finished"] == 6, status["counts"]
assert len(trials) == 6, f"overshoot: {len(trials)} trials for n_trials 6: {[(t.number, t.state.name) for t in trials]}"
per_worker = [[int(n) for n in re.findall(r"^trial (\d+) (?:COMPLETE|PRUNED|FAIL)", open(f"{work}/w{w}.err").read(), re.M)] for w in (1, 2)]
ran = per_worker[0] + per_worker[1]
assert sorted(ran) == numbers, ("each trial run by exactly one worker", sorted(ran))
print("two workers ran", [len(w) for w in per_worker], "trials")
' "$WORK"
echo "optimize two workers: all checks passed"
