# Issue 29 part 5: a model that does not fit says so. A 2PL estimator
# (trained some seconds) checks data simulated from its own prior and data
# from other models (a second dimension, guessing): the posterior predictive check per item and the
# summary-space MMD (model_check in --format json, --check-out's CSV, lines
# on stderr).
source "$(dirname "$0")/lib.sh"
train_small_2pl "$WORK/model" "[10, 14]" "[400, 700]" 12

# simulate FILE KIND SEED: 12 items x 600 persons. KIND 2pl: the trained model's prior. 3pl: hard items
# (b ~ N(1, 0.3), log a ~ N(0.7, 0.2)) with guessing c = 0.4. 2d: a 2PL whose items 6..11 answer to a second, independent ability.
simulate() {
  "$OPTUNA_PYTHON" - "$@" <<'PY'
import sys
import numpy as np
path, kind, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
items, persons = 12, 600
rng = np.random.default_rng(seed)
log_a, theta = rng.normal(0.7 if kind == "3pl" else 0, 0.2 if kind == "3pl" else 0.5, items), rng.normal(0, 1, (persons, 2))
b = rng.normal(1.0, 0.3, items) if kind == "3pl" else rng.normal(0, 1, items)
ability = theta[:, (np.arange(items) >= items // 2).astype(int)] if kind == "2d" else theta[:, [0] * items]
c = 0.4 if kind == "3pl" else 0.0
p = c + (1 - c) / (1 + np.exp(-np.exp(log_a) * (ability - b)))
y = rng.random((persons, items)) < p
with open(path, "w") as f:
    f.write(",".join(f"item{j}" for j in range(items)) + "\n")
    for row in y:
        f.write(",".join(str(int(v)) for v in row) + "\n")
PY
}

# check KIND SEED: infer with the model check; its JSON in $WORK/KIND-SEED.json, stderr in .err.
check() {
  simulate "$WORK/$1-$2.csv" "$1" "$2"
  "$BFHPO" infer "$WORK/model" --data "$WORK/$1-$2.csv" --draws 200 --seed 3 --refine off --format json \
    --check-out "$WORK/$1-$2.check.csv" > "$WORK/$1-$2.json" 2> "$WORK/$1-$2.err" ||
    fail "infer on $1 data exited $?: $(cat "$WORK/$1-$2.err")"
}

# figures KIND SEEDS...: "misfitting items, p-value" of each data set, one line each.
figures() {
  local kind="$1"; shift
  for seed in "$@"; do
    "$OPTUNA_PYTHON" -c '
import json, sys
c = json.load(open(sys.argv[1]))["model_check"]
print(len(c["items"]["misfitting"]), c["summary_space"]["p_value"])' "$WORK/$kind-$seed.json"
  done
}

for seed in 1 2 3 4; do check 2pl "$seed"; done
for seed in 1 2; do check 3pl "$seed"; done
for seed in 1 2; do check 2d "$seed"; done
echo "misfitting items and summary-space p-value, 2pl data: $(figures 2pl 1 2 3 4 | tr '\n' ';')" \
  "3pl data: $(figures 3pl 1 2 | tr '\n' ';') 2d data: $(figures 2d 1 2 | tr '\n' ';')" >&2

# The model's own data: each item is flagged with chance at most 0.05, so of 48 items more than 5
# has probability under 0.04; each p-value is uniform, so one under 0.01 among 4 has 0.04.
misfits=$(figures 2pl 1 2 3 4 | awk '{n += $1} END {print n}')
[ "$misfits" -le 5 ] || fail "$misfits of 48 items of the model's own data flagged"
figures 2pl 1 2 3 4 | awk '$2 < 0.01 {exit 1}' || fail "the model's own data lie outside: $(figures 2pl 1 2 3 4)"
! grep -q "warning" "$WORK/2pl-1.err" || fail "warnings on the model's own data: $(cat "$WORK/2pl-1.err")"
grep -q "^model check: 0 of 12 items misfit" "$WORK/2pl-1.err" || fail "no model check line: $(cat "$WORK/2pl-1.err")"
# A second dimension: the items' pairwise correlations spread as one ability never spreads them.
# By chance, 6 or more of 12 items flagged has probability 2e-5.
for seed in 1 2; do
  n=$(figures 2d "$seed" | cut -d' ' -f1)
  [ "$n" -ge 6 ] || fail "2d data $seed: $n of 12 items flagged"
  grep -q "warning: model check: item 'item[0-9]*' misfits: pair_r_sd" "$WORK/2d-$seed.err" ||
    fail "no pair_r_sd warning: $(cat "$WORK/2d-$seed.err")"
done
# Guessing (c = 0.4 on hard, discriminating items): the data's summary lies outside the simulated ones'.
for seed in 1 2; do
  figures 3pl "$seed" | awk '$2 >= 0.01 {exit 1}' || fail "3pl data $seed not outside: $(figures 3pl "$seed")"
  grep -q "warning: model check: the data's summary lies farther" "$WORK/3pl-$seed.err" ||
    fail "no summary-space warning: $(cat "$WORK/3pl-$seed.err")"
done

# --check-out: a row per item and statistic (2 categories + 4); its misfits are the JSON's.
[ "$(head -1 "$WORK/2d-1.check.csv")" = \
  "item,statistic,observed,replicated_mean,replicated_q2.5,replicated_q97.5,tail_probability,misfit" ] ||
  fail "check CSV header: $(head -1 "$WORK/2d-1.check.csv")"
[ "$(tail -n +2 "$WORK/2d-1.check.csv" | wc -l)" -eq 72 ] || fail "check CSV rows: $(wc -l < "$WORK/2d-1.check.csv")"
csv_misfits=$(tail -n +2 "$WORK/2d-1.check.csv" | awk -F, '$8 == "true" {print $1}' | sort -u | wc -l)
[ "$csv_misfits" -eq "$(figures 2d 1 | cut -d' ' -f1)" ] || fail "CSV flags $csv_misfits items, JSON $(figures 2d 1)"

# --check-replications 0: no check, and the summary is what it is with the check.
"$BFHPO" infer "$WORK/model" --data "$WORK/2d-1.csv" --draws 200 --seed 3 --refine off --format json --check-replications 0 \
  > "$WORK/unchecked.json" 2> "$WORK/unchecked.err"
"$OPTUNA_PYTHON" -c '
import json, sys
unchecked, checked = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "model_check" not in unchecked, "--check-replications 0 still checked"
del checked["model_check"]
assert unchecked == checked, "the model check changed the posterior summary"' "$WORK/unchecked.json" "$WORK/2d-1.json" ||
  fail "summaries with and without the check differ"
! grep -q "model check" "$WORK/unchecked.err" || fail "check line with --check-replications 0"
# Options that could flag nothing, a check file without a check, two outputs on one file: exit 2, nothing written.
expect_user_error "no item could be flagged" "$BFHPO" infer "$WORK/model" --data "$WORK/2d-1.csv" --check-replications 100
expect_user_error "--check-out with --check-replications 0" "$BFHPO" infer "$WORK/model" --data "$WORK/2d-1.csv" \
  --check-replications 0 --check-out "$WORK/x.csv"
expect_user_error "name the same file" "$BFHPO" infer "$WORK/model" --data "$WORK/2d-1.csv" \
  --out "$WORK/same.csv" --check-out "$WORK/same.csv"
[ ! -e "$WORK/x.csv" ] && [ ! -e "$WORK/same.csv" ] || fail "a refused check wrote a file"
