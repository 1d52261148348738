# Issue 13 part 2: `bfhpo infer` on a real response matrix: a per-item
# summary that is deterministic for a seed, warnings outside the trained
# ranges, a study's best trial as the model, and exit 2 naming the line and
# column for every kind of bad file.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 1
"$BFHPO" train "$STUDY" --out "$WORK/model" > "$WORK/train.out" 2>&1 || fail "train: $(tail -3 "$WORK/train.out")"
[ -s "$WORK/model/weights.torchscript.pt" ] || fail "train wrote no TorchScript module beside weights.pt"

simulate_2pl "$WORK/data.csv" 7 50 11

"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 200 --seed 5 --out "$WORK/s1.csv" \
  --draws-out "$WORK/d1.csv" 2> "$WORK/infer.err" || fail "infer exited $?: $(cat "$WORK/infer.err")"
# Inside the trained ranges nothing but the model check (its own test: infer_model_check_test.sh) and the
# default importance step (infer_refine_test.sh: a 1-epoch network's k-hat is high) is said.
! grep -v "model check\|^refinement: \|Pareto k-hat" "$WORK/infer.err" | grep -q . ||
  fail "warnings inside the trained ranges: $(cat "$WORK/infer.err")"
grep -q "^refinement: Pareto k-hat" "$WORK/infer.err" || fail "the default importance step did not run"
grep -q "^model check: " "$WORK/infer.err" || fail "no model check line: $(cat "$WORK/infer.err")"
"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 200 --seed 5 --out "$WORK/s2.csv" \
  --draws-out "$WORK/d2.csv"
cmp -s "$WORK/s1.csv" "$WORK/s2.csv" && cmp -s "$WORK/d1.csv" "$WORK/d2.csv" || fail "same data and seed, other output"
"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 200 --seed 6 --out "$WORK/s3.csv"
cmp -s "$WORK/s1.csv" "$WORK/s3.csv" && fail "seed 6 gave seed 5's draws"

"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 200 --seed 5 --format json > "$WORK/s1.json"
"$OPTUNA_PYTHON" - "$WORK/s1.json" "$WORK/s1.csv" "$WORK/d1.csv" <<'PY' || fail "summary does not match the draws"
import csv, json, sys
import numpy as np
summary = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
draws = list(csv.DictReader(open(sys.argv[3])))
names = [f"item{j}" for j in range(7)]
assert [i["item"] for i in summary["items"]] == names and summary["draws"] == 200 and summary["seed"] == 5
assert [r["item"] for r in rows] == [n for n in names for _ in range(3)]
assert [r["parameter"] for r in rows[:3]] == ["a", "log_a", "b"]
for item in summary["items"]:
    d = [r for r in draws if r["item"] == item["item"]]
    assert [int(r["draw"]) for r in d] == list(range(200))
    for name, values in (("log_a", [float(r["log_a"]) for r in d]), ("b", [float(r["b"]) for r in d]),
                         ("a", [np.exp(float(r["log_a"])) for r in d])):
        s, v = item[name], np.array(values)
        # The draws file has 9 significant digits of float32 draws: 1e-6 relative covers its rounding.
        tol = 1e-6 * (1 + np.abs(v).max())
        assert abs(s["mean"] - v.mean()) <= tol and abs(s["sd"] - v.std(ddof=1)) <= tol, (name, s)
        for q, key in ((2.5, "q2.5"), (50, "q50"), (97.5, "q97.5")):
            assert abs(s[key] - np.percentile(v, q)) <= tol, (name, key, s[key], np.percentile(v, q))
    assert all(np.isfinite(float(r["log_prob"])) for r in d)
print("summary of 7 items agrees with numpy on the draws")
PY

# Outside the trained ranges (6-8 items, 40-60 persons): a warning naming the range, still a result.
simulate_2pl "$WORK/wide.csv" 12 30 12
"$BFHPO" infer "$WORK/model" --data "$WORK/wide.csv" --draws 50 > "$WORK/wide.out" 2> "$WORK/wide.err" ||
  fail "infer outside the ranges exited $?"
grep -q "12 items, outside the 6 to 8" "$WORK/wide.err" && grep -q "30 persons, outside the 40 to 60" "$WORK/wide.err" ||
  fail "no range warnings: $(cat "$WORK/wide.err")"
[ "$(grep -c ',b,' "$WORK/wide.out")" -eq 12 ] || fail "not 12 items in the summary"

# A study's best trial is a model too.
"$BFHPO" optimize "$STUDY" > /dev/null 2>&1 || fail "optimize failed"
"$BFHPO" infer "$STUDY" --data "$WORK/data.csv" --draws 20 > "$WORK/study.out" || fail "infer on the study failed"
[ "$(grep -c ',log_a,' "$WORK/study.out")" -eq 7 ] || fail "study inference lacks items"

# Bad input files: exit 2, the file, line and column named, and a fix.
printf 'id,i1,i2\np1,0,1\np2,1\n' > "$WORK/ragged.csv"
expect_user_error "ragged.csv:3:1: 2 fields, the header has 3" "$BFHPO" infer "$WORK/model" --data "$WORK/ragged.csv"
printf 'i1,i2\n0,1\n1,2\n' > "$WORK/value.csv"
expect_user_error "value.csv:3:2 (item 'i2'): '2' is not a response" "$BFHPO" infer "$WORK/model" --data "$WORK/value.csv"
printf 'i1\ti2\n0\t1\n\t1\n' > "$WORK/missing.tsv"
expect_user_error "missing.tsv:3:1 (item 'i1'): a missing response" "$BFHPO" infer "$WORK/model" --data "$WORK/missing.tsv"
printf 'i1,i2\n0,NA\n1,1\n' > "$WORK/na.csv"
expect_user_error "na.csv:2:2 (item 'i2'): a missing response" "$BFHPO" infer "$WORK/model" --data "$WORK/na.csv"
printf 'person\np1\np2\n' > "$WORK/noitems.csv"
expect_user_error "noitems.csv:1:1: no item columns" "$BFHPO" infer "$WORK/model" --data "$WORK/noitems.csv"
printf 'i1,i2\n0,1\n' > "$WORK/one.csv"
expect_user_error "one.csv: 1 person(s)" "$BFHPO" infer "$WORK/model" --data "$WORK/one.csv"
printf 'i1,i2\n0,1\n1\x00,0\n' > "$WORK/binary.csv"
expect_user_error "binary.csv:3:2: not a text file" "$BFHPO" infer "$WORK/model" --data "$WORK/binary.csv"
expect_user_error "not a text file" "$BFHPO" infer "$WORK/model" --data "$WORK/model/weights.pt"
printf 'i1,i1\n0,1\n1,0\n' > "$WORK/twice.csv"
expect_user_error "twice.csv:1:2: item 'i1' appears twice" "$BFHPO" infer "$WORK/model" --data "$WORK/twice.csv"
expect_user_error "no such file" "$BFHPO" infer "$WORK/nowhere" --data "$WORK/data.csv"
expect_user_error "cannot open" "$BFHPO" infer "$WORK/model" --data "$WORK/absent.csv"
expect_user_error "--draws must be at least 2" "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 1
echo "infer: all checks passed"
