# Issue 13 part 2: `bfhpo infer`'s 95% intervals cover the true item
# parameters of data sets simulated from the prior at 95%, within 3 binomial
# standard errors, and are narrower than the prior (bench/infer_coverage.py;
# a model trained for about a minute on the CPU).
source "$(dirname "$0")/lib.sh"
train_small_2pl "$WORK/model" "[6, 10]" "[80, 120]" 20
"$OPTUNA_PYTHON" "$(dirname "$0")/../../bench/infer_coverage.py" "$BFHPO" "$WORK/model" \
  --datasets 15 --items 8 --persons 100 --draws 400 --seed 2 --check || fail "coverage off 95% or no contraction"
echo "infer_coverage: all checks passed"
