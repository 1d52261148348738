# Issue 41 item 1: `infer --model NAME`, no study and no training: the shipped
# estimator whose ranges hold the file answers it and says which it is; a file
# outside every one's ranges, an unknown model, or both a MODEL_DIR and
# --model exit 2 with the fix.
source "$(dirname "$0")/lib.sh"

# 20 items x 500 persons from the shipped 2PL's prior; small.csv: its first 99 persons (below every 2PL's range).
simulate_2pl "$WORK/scale.csv" 20 500 41
head -100 "$WORK/scale.csv" > "$WORK/small.csv"

"$BFHPO" infer --model 2pl --data "$WORK/scale.csv" --draws 200 --check-replications 0 --out "$WORK/items.csv" \
  2> "$WORK/err" || fail "infer --model 2pl: $(cat "$WORK/err")"
grep -q "^estimator: the shipped 2pl (.*estimators/2pl; trained on 16-24 items, 400-600 persons, no missing cells, priors log_a ~ N(0, 0.5), b ~ N(0, 1))" \
  "$WORK/err" || fail "no estimator line: $(cat "$WORK/err")"
[ "$(grep -c '^item[0-9]*,b,' "$WORK/items.csv")" -eq 20 ] || fail "not every item answered: $(head "$WORK/items.csv")"

expect_user_error "lie outside every shipped estimator's ranges; 2pl: 16-24 items, 400-600 persons" \
  "$BFHPO" infer --model 2pl --data "$WORK/small.csv" --out "$WORK/never.csv"
grep -qF "bfhpo init --data FILE --model 2pl" "$WORK/err" || fail "no pointer to init: $(cat "$WORK/err")"
expect_user_error "--model 3pl: no estimator of that model ships with bfhpo" \
  "$BFHPO" infer --model 3pl --data "$WORK/scale.csv" --out "$WORK/never.csv"
# Binary data for the graded model: no graded estimator holds 2 categories, and the message lists each one's ranges.
expect_user_error "(20 items, 500 persons, 0% missing cells, 2 categories) lie outside every shipped estimator's ranges; grm-k" \
  "$BFHPO" infer --model grm --data "$WORK/scale.csv" --out "$WORK/never.csv"
for needle in "grm-k5: 5-10 items, 200-800 persons, at most 10% missing cells, 5 categories" \
  "grm-k6: 4-6 items, 179-1499 persons, at most 6% missing cells, 6 categories"; do
  grep -qF "$needle" "$WORK/err" || fail "the ranges lack '$needle': $(cat "$WORK/err")"
done
expect_user_error "give one estimator" \
  "$BFHPO" infer "$WORK" --model 2pl --data "$WORK/scale.csv" --out "$WORK/never.csv"
expect_user_error "missing STUDY.json" "$BFHPO" infer --data "$WORK/scale.csv" --out "$WORK/never.csv"
[ ! -e "$WORK/never.csv" ] || fail "a refused infer wrote its output"
