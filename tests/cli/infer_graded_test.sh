# `bfhpo infer` on graded responses with missing cells, for a GRM estimator
# trained on missing responses: categories 0..K-1 read, empty and NA cells
# masked (the same output for either spelling), every draw's thresholds in
# order (b1 < b2 < b3), and exit 2 naming FILE:LINE:COLUMN and the fix for a
# category the model does not have, a non-integer, or a missing cell given
# to a model trained on complete responses.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/grm.json"
write_training_study "$STUDY" 1 \
  '"simulator": {"model": "grm", "n_categories": 4, "n_items": [6, 8], "n_persons": [40, 60], "missing": [0, 0.3]}'
"$BFHPO" train "$STUDY" --out "$WORK/model" > "$WORK/train.out" 2>&1 || fail "train: $(tail -3 "$WORK/train.out")"

# graded FILE MISSING_SPELLING: 7 items x 50 persons of a GRM with 4 categories, a fifth of the cells missing.
graded() {
  "$OPTUNA_PYTHON" - "$@" <<'PY'
import sys
import numpy as np
path, missing = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
items, persons = 7, 50
log_a, theta = rng.normal(0, 0.5, items), rng.normal(0, 1, persons)
b = np.sort(rng.normal(0, 1, (items, 3)), axis=1)
at_least = 1 / (1 + np.exp(-np.exp(log_a)[None, :, None] * (theta[:, None, None] - b[None])))
y = (rng.random((persons, items))[..., None] < at_least).sum(-1)
hole = np.random.default_rng(4).random((persons, items)) < 0.2
with open(path, "w") as f:
    f.write("person," + ",".join(f"q{j}" for j in range(items)) + "\n")
    for p in range(persons):
        f.write(f"p{p}," + ",".join(missing if hole[p, j] else str(y[p, j]) for j in range(items)) + "\n")
PY
}
graded "$WORK/na.csv" NA
graded "$WORK/empty.csv" ""
grep -q ",NA" "$WORK/na.csv" && grep -q ",," "$WORK/empty.csv" && grep -q ",3" "$WORK/na.csv" ||
  fail "the data lack missing cells or the top category"

"$BFHPO" infer "$WORK/model" --data "$WORK/na.csv" --draws 300 --seed 4 --out "$WORK/na.out" \
  --draws-out "$WORK/na.draws.csv" 2> "$WORK/na.err" || fail "infer on graded data exited $?: $(cat "$WORK/na.err")"
"$BFHPO" infer "$WORK/model" --data "$WORK/empty.csv" --draws 300 --seed 4 --out "$WORK/empty.out" \
  --draws-out "$WORK/empty.draws.csv" 2> /dev/null || fail "infer with empty cells exited $?"
cmp -s "$WORK/na.out" "$WORK/empty.out" && cmp -s "$WORK/na.draws.csv" "$WORK/empty.draws.csv" ||
  fail "NA and empty cells gave different posteriors"
"$OPTUNA_PYTHON" - "$WORK/na.out" "$WORK/na.draws.csv" <<'PY' || fail "graded posterior summary or draws wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["parameter"] for r in rows[:5]] == ["a", "log_a", "b1", "b2", "b3"], rows[:5]
assert sorted({r["item"] for r in rows}) == [f"q{j}" for j in range(7)]
draws = list(csv.DictReader(open(sys.argv[2])))
assert len(draws) == 7 * 300
unordered = [d for d in draws if not float(d["b1"]) < float(d["b2"]) < float(d["b3"])]
assert not unordered, unordered[:3]
print("graded posterior: 7 items, 2100 draws, every one with b1 < b2 < b3")
PY

# The data file's own mistakes: exit 2, FILE:LINE:COLUMN, the model's categories in the fix.
printf 'q1,q2\n0,3\n1,4\n' > "$WORK/four.csv"
expect_user_error "four.csv:3:2 (item 'q2'): '4' is not a response of this model" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/four.csv"
grep -qF "Fix: an integer 0..3" "$WORK/err" || fail "the fix lacks the categories: $(cat "$WORK/err")"
printf 'q1,q2\n0,2.5\n1,1\n' > "$WORK/half.csv"
expect_user_error "half.csv:2:2 (item 'q2'): '2.5' is not a response" "$BFHPO" infer "$WORK/model" --data "$WORK/half.csv"

# A binary model trained on complete responses: a missing cell is refused, naming the way to train one.
BINARY="$WORK/binary.json"
write_training_study "$BINARY" 1
"$BFHPO" train "$BINARY" --out "$WORK/binary" > /dev/null 2>&1 || fail "train the binary model"
printf 'q1,q2\n0,1\n1,NA\n' > "$WORK/hole.csv"
expect_user_error "hole.csv:3:2 (item 'q2'): a missing response; this model trained on complete responses" \
  "$BFHPO" infer "$WORK/binary" --data "$WORK/hole.csv"
grep -qF "simulator.missing" "$WORK/err" || fail "the fix does not name simulator.missing: $(cat "$WORK/err")"
printf 'q1,q2\n0,1\n1,2\n' > "$WORK/two.csv"
expect_user_error "two.csv:3:2 (item 'q2'): '2' is not a response" "$BFHPO" infer "$WORK/binary" --data "$WORK/two.csv"
echo "infer_graded: all checks passed"
