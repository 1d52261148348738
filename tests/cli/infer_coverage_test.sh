# Issue 13 part 2: `bfhpo infer`'s 95% intervals cover the true item
# parameters of data sets simulated from the prior at 95%, within 3 binomial
# standard errors, and are narrower than the prior (bench/infer_coverage.py;
# a model trained for about a minute on the CPU).
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/coverage.json"
write_training_study "$STUDY" 1 '"simulator": {"model": "2pl", "n_items": [6, 10], "n_persons": [80, 120]},
  "training": {"epochs": 20, "num_batches": 25, "batch_size": 16, "validation_sims": 8, "device": "cpu",
               "learning_rate": 3e-3},
  "approximator": {"summary.cell_dim": 16, "summary.cell_mlp_width": 32, "summary.cell_mlp_depth": 1,
                   "summary.embed_dim": 32, "summary.attention_heads": 2, "summary.attention_layers": 1,
                   "summary.summary_dim": 8, "flow.depth": 3, "flow.subnet_width": 32, "flow.subnet_depth": 1}'
"$BFHPO" train "$STUDY" --out "$WORK/model" > "$WORK/train.out" 2>&1 || fail "train: $(tail -3 "$WORK/train.out")"
"$OPTUNA_PYTHON" "$(dirname "$0")/../../bench/infer_coverage.py" "$BFHPO" "$WORK/model" \
  --datasets 15 --items 8 --persons 100 --draws 400 --seed 2 --check || fail "coverage off 95% or no contraction"
echo "infer_coverage: all checks passed"
