# Issue 40: many data sets in one `bfhpo infer` call (files, a folder, a
# quoted pattern, one long file split by --group-column), each inferred as it
# would be alone (the long outputs are the single-file outputs with a first
# column `dataset`), a row a data set in --datasets-out, every person's score,
# and a data set that cannot be read: its row says why, the others are
# written, exit 2 naming it.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 1
"$BFHPO" train "$STUDY" --out "$WORK/model" > "$WORK/train.out" 2>&1 || fail "train: $(tail -3 "$WORK/train.out")"

# simulate FILE SEED [GROUP]: 7 items x 40 persons of a 2PL, an id column (and a group column).
simulate() {
  "$OPTUNA_PYTHON" - "$@" <<'PY'
import sys
import numpy as np
path, seed = sys.argv[1], int(sys.argv[2])
group = sys.argv[3] if len(sys.argv) > 3 else None
rng = np.random.default_rng(seed)
log_a, b, theta = rng.normal(0, 0.5, 7), rng.normal(0, 1, 7), rng.normal(0, 1, 40)
y = rng.random((40, 7)) < 1 / (1 + np.exp(-np.exp(log_a) * (theta[:, None] - b)))
with open(path, "w") as f:
    f.write("person_id," + ("wave," if group else "") + ",".join(f"item{j}" for j in range(7)) + "\n")
    for p in range(40):
        f.write(f"s{seed}p{p}," + (group + "," if group else "") + ",".join(str(int(v)) for v in y[p]) + "\n")
PY
}
mkdir -p "$WORK/sets"
for seed in 1 2 3; do simulate "$WORK/sets/set$seed.csv" "$seed"; done
OPTIONS=(--draws 100 --check-replications 0)

# Alone: one file, outputs without a dataset column; the k-th data set of a run (from 0) draws with seed + k.
for seed in 1 2 3; do
  "$BFHPO" infer "$WORK/model" --data "$WORK/sets/set$seed.csv" "${OPTIONS[@]}" --seed $((3 + seed)) --out "$WORK/alone$seed.csv" \
    --draws-out "$WORK/alone_draws$seed.csv" --persons-out "$WORK/alone_persons$seed.csv" 2> /dev/null
  head -1 "$WORK/alone$seed.csv" | grep -q '^item,parameter,' || fail "one file: the summary has another header"
done

# together FILE...: the long outputs of one call, compared with the files alone.
together() {
  "$OPTUNA_PYTHON" - "$WORK" "$@" <<'PY'
import csv, sys
work, names = sys.argv[1], sys.argv[2:]
for kind, prefix in (("all", "alone"), ("all_draws", "alone_draws"), ("all_persons", "alone_persons")):
    rows = list(csv.reader(open(f"{work}/{kind}.csv")))
    assert rows[0][0] == "dataset", f"{kind}: first column {rows[0][0]}"
    seen = []
    for k, name in enumerate(names):
        alone = list(csv.reader(open(f"{work}/{prefix}{k + 1}.csv")))
        assert rows[0][1:] == alone[0], f"{kind}: header {rows[0]} vs {alone[0]}"
        mine = [r[1:] for r in rows[1:] if r[0] == name]
        assert mine == alone[1:], f"{kind}: data set {name} differs from its file alone"
        seen.append(name)
    assert len(rows) - 1 == sum(1 for r in rows[1:] if r[0] in seen), f"{kind}: rows of no data set"
table = list(csv.DictReader(open(f"{work}/datasets.csv")))
assert [r["dataset"] for r in table] == names, [r["dataset"] for r in table]
for k, r in enumerate(table):
    assert r["seed"] == str(4 + k), r
    assert r["persons"] == "40" and r["items"] == "7" and r["error"] == "", r
    # The default importance step ran. Of 100 draws its effective sample size is below 100 unless every weight
    # is equal, so the weights are never reliable: each item is judged alone, and the amortized draws stand or
    # need chains by the largest coverage an interval would lose (2 points at most).
    assert r["pareto_k"] != "", r
    loss = float(r["item_coverage_loss"])
    assert (r["path"], r["needs_chains"]) == ("amortized", "true" if loss > 0.02 else "false"), r
PY
}
ALL=(--out "$WORK/all.csv" --draws-out "$WORK/all_draws.csv" --persons-out "$WORK/all_persons.csv"
     --datasets-out "$WORK/datasets.csv")
"$BFHPO" infer "$WORK/model" --data "$WORK/sets/set1.csv" "$WORK/sets/set2.csv" "$WORK/sets/set3.csv" "${OPTIONS[@]}" --seed 4 \
  "${ALL[@]}" 2> "$WORK/many.err" || fail "three files: exit $?: $(cat "$WORK/many.err")"
together set1 set2 set3 || fail "three files in one call are not the three alone"
grep -q "^paths: .* s)" "$WORK/many.err" || fail "no closing line of the paths: $(cat "$WORK/many.err")"
grep -q "infer: 3 of 3 data sets" "$WORK/many.err" || fail "no progress line: $(cat "$WORK/many.err")"
"$BFHPO" infer "$WORK/model" --data "$WORK/sets" "${OPTIONS[@]}" --seed 4 "${ALL[@]}" 2> /dev/null || fail "a folder: exit $?"
together set1 set2 set3 || fail "a folder is not its files"
"$BFHPO" infer "$WORK/model" --data "$WORK/sets/set*.csv" "${OPTIONS[@]}" --seed 4 "${ALL[@]}" 2> /dev/null || fail "a pattern: exit $?"
together set1 set2 set3 || fail "a quoted pattern is not its files"

# One long file: a data set a value of the group column, as its rows alone.
for seed in 1 2 3; do simulate "$WORK/g$seed.csv" "$seed" "w$seed"; done
{ head -1 "$WORK/g1.csv"; for seed in 1 2 3; do tail -n +2 "$WORK/g$seed.csv"; done; } > "$WORK/long.csv"
"$BFHPO" infer "$WORK/model" --data "$WORK/long.csv" --group-column wave "${OPTIONS[@]}" --seed 4 "${ALL[@]}" 2> /dev/null \
  || fail "--group-column: exit $?"
together w1 w2 w3 || fail "a long file's groups are not the files alone"

# JSON: an array of the single-file summaries, each with its dataset.
"$BFHPO" infer "$WORK/model" --data "$WORK/sets" "${OPTIONS[@]}" --seed 4 --format json --out "$WORK/all.json" \
  --datasets-out "$WORK/datasets.json" 2> /dev/null
"$BFHPO" infer "$WORK/model" --data "$WORK/sets/set2.csv" "${OPTIONS[@]}" --seed 5 --format json --out "$WORK/alone2.json" 2> /dev/null
"$OPTUNA_PYTHON" - "$WORK" <<'PY' || fail "the JSON of many data sets is not the single files' JSON"
import json, sys
work = sys.argv[1]
many, alone = json.load(open(f"{work}/all.json")), json.load(open(f"{work}/alone2.json"))
assert [d["dataset"] for d in many] == ["set1", "set2", "set3"]
for summary in (many[1], alone):
    summary["refinement"].pop("seconds")  # the one value that is not the data's
assert {k: v for k, v in many[1].items() if k != "dataset"} == alone
table = json.load(open(f"{work}/datasets.json"))
assert [r["dataset"] for r in table] == ["set1", "set2", "set3"] and table[0]["error"] is None
PY

# A data set that cannot be read: its row says why, the others are written, exit 2 naming it.
cp "$WORK/sets/set2.csv" "$WORK/bad.csv"
sed -i '5s/,[01]$/,7/' "$WORK/bad.csv"
expect_user_error "1 of 3 data sets failed (bad)" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/sets/set1.csv" "$WORK/bad.csv" "$WORK/sets/set3.csv" "${OPTIONS[@]}" --seed 4 \
  --out "$WORK/partial.csv" --datasets-out "$WORK/partial_sets.csv"
grep -qF "bad.csv:5:" "$WORK/err" || fail "the failed data set's own error is not said: $(cat "$WORK/err")"
"$OPTUNA_PYTHON" - "$WORK" <<'PY' || fail "a failed data set lost the others' results"
import csv, sys
work = sys.argv[1]
table = {r["dataset"]: r for r in csv.DictReader(open(f"{work}/partial_sets.csv"))}
assert table["bad"]["path"] == "failed" and "is not a response of this model" in table["bad"]["error"], table["bad"]
assert table["set1"]["error"] == "" and table["set3"]["error"] == ""
datasets = {r["dataset"] for r in csv.DictReader(open(f"{work}/partial.csv"))}
assert datasets == {"set1", "set3"}, datasets
PY

# What matches nothing, or a group column the file lacks: exit 2 with the fix, nothing written.
mkdir -p "$WORK/empty"
expect_user_error "a folder with no *.csv or *.tsv file" "$BFHPO" infer "$WORK/model" --data "$WORK/empty" --out "$WORK/x.csv"
expect_user_error "the pattern matches no file" "$BFHPO" infer "$WORK/model" --data "$WORK/nothing*.csv" --out "$WORK/x.csv"
expect_user_error "no column named 'country'" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/long.csv" --group-column country --out "$WORK/x.csv"
expect_user_error "--plausible-values without --persons-out" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/sets" --plausible-values 5
[ ! -e "$WORK/x.csv" ] || fail "a refused call wrote its output"
echo "infer_many_test: ok"
