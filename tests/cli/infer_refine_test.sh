# Issue 29 part 3: `infer --refine`, the exact posterior where the amortized
# one is off. A 2PL estimator trained some seconds is a poor posterior on
# purpose: importance sampling says so (Pareto k-hat), auto runs the chains,
# and their draws are the model's exact posterior: near the parameters the
# data came from, and written as infer writes any posterior.
source "$(dirname "$0")/lib.sh"
train_small_2pl "$WORK/model" "[10, 14]" "[400, 700]" 4

# 12 items x 600 persons from the estimator's prior (log a ~ N(0, 0.5), b ~ N(0, 1)); truth.csv: item,log_a,b.
"$OPTUNA_PYTHON" - "$WORK" <<'PY'
import sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(29)
items, persons = 12, 600
log_a, b, theta = rng.normal(0, 0.5, items), rng.normal(0, 1, items), rng.normal(0, 1, persons)
y = rng.random((persons, items)) < 1 / (1 + np.exp(-np.exp(log_a) * (theta[:, None] - b)))
with open(f"{work}/data.csv", "w") as f:
    f.write(",".join(f"item{j}" for j in range(items)) + "\n")
    for row in y:
        f.write(",".join(str(int(v)) for v in row) + "\n")
with open(f"{work}/truth.csv", "w") as f:
    f.write("item,log_a,b\n")
    for j in range(items):
        f.write(f"item{j},{log_a[j]!r},{b[j]!r}\n")
PY

"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 400 --check-replications 0 --format json \
  > "$WORK/amortized.json" 2> "$WORK/amortized.err" || fail "infer: $(cat "$WORK/amortized.err")"
# The default (issue 40): importance sampling, whose k-hat distrusts these draws: they stay amortized, chains advised.
grep -q "^refinement: Pareto k-hat .* draws left amortized" "$WORK/amortized.err" ||
  fail "the default did not weigh the draws by importance: $(cat "$WORK/amortized.err")"
grep -q "^warning: .*Fix: --refine mcmc (or auto)" "$WORK/amortized.err" || fail "no advice to run chains"
"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 400 --check-replications 0 --format json --refine off \
  > "$WORK/off.json" 2> "$WORK/off.err" || fail "infer --refine off: $(cat "$WORK/off.err")"
grep -q refinement "$WORK/off.err" "$WORK/off.json" && fail "--refine off refined"

"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 400 --check-replications 0 --format json \
  --refine auto --draws-out "$WORK/draws.csv" > "$WORK/refined.json" 2> "$WORK/refined.err" ||
  fail "infer --refine auto: $(cat "$WORK/refined.err")"
grep -q "^refinement: Pareto k-hat .* exact posterior by MCMC" "$WORK/refined.err" ||
  fail "no refinement line on stderr: $(cat "$WORK/refined.err")"

"$OPTUNA_PYTHON" - "$WORK" <<'PY' || fail "the refined posterior"
import csv, json, math, sys
work = sys.argv[1]
refined, amortized = json.load(open(f"{work}/refined.json")), json.load(open(f"{work}/amortized.json"))
off = json.load(open(f"{work}/off.json"))
assert amortized["refinement"]["method"] == "amortized" and amortized["items"] == off["items"], "importance changed draws it distrusts"
r = refined["refinement"]
# 4 training epochs of a tiny network: far from the exact posterior, which importance sampling cannot mend.
assert r["method"] == "mcmc" and not r["importance_reliable"] and r["pareto_k"] > 0.7, r
assert r["max_rhat"] < 1.05 and r["min_ess"] > 200 and 0.1 < r["acceptance"] < 0.6, r
assert refined["draws"] == 400 and len(refined["items"]) == 12
truth = {row["item"]: row for row in csv.DictReader(open(f"{work}/truth.csv"))}
z = [(item[p]["mean"] - float(truth[item["item"]][p])) / item[p]["sd"] for item in refined["items"] for p in ("log_a", "b")]
# The exact posterior covers the truth: 24 z-scores, none beyond 4 (chance 1.5e-3 for all 24 together).
assert max(abs(v) for v in z) < 4, z
assert sum(v * v for v in z) / len(z) < 2.5, z  # their mean square is about 1 (chi-square / 24: 99.99% below 2.5)
# The chains, not the network: their posterior is not the amortized one.
diff = max(abs(a[p]["mean"] - b[p]["mean"]) / b[p]["sd"] for a, b in zip(amortized["items"], refined["items"]) for p in ("log_a", "b"))
assert diff > 0.5, diff
# Every draw written, each with the amortized log q of its value (finite: the network scored the chains' draws).
rows = list(csv.DictReader(open(f"{work}/draws.csv")))
assert len(rows) == 12 * 400
assert all(math.isfinite(float(row["log_prob"])) for row in rows)
means = {}
for row in rows:
    means.setdefault(row["item"], []).append(float(row["b"]))
for item in refined["items"]:
    m = sum(means[item["item"]]) / 400
    assert abs(m - item["b"]["mean"]) < 1e-5, (m, item["b"]["mean"])
PY

# Bad refinement options: exit 2, the option named, nothing written.
expect_user_error "--refine nuts: 'nuts' is not a refinement" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --refine nuts --out "$WORK/never.csv"
expect_user_error "at least 2 chains" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --refine mcmc --refine-chains 1 --out "$WORK/never.csv"
[ ! -e "$WORK/never.csv" ] || fail "a refused infer wrote its output"
echo PASS

# --prior (issue 41 item 3): the chains target the user's prior, and the output says which prior is which.
"$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 400 --check-replications 0 --format json \
  --refine auto --prior 'b=normal(2, 0.2)' > "$WORK/prior.json" 2> "$WORK/prior.err" ||
  fail "infer --prior: $(cat "$WORK/prior.err")"
grep -q "^prior: the amortized draws come from the training prior (log_a ~ N(0, 0.5), b ~ N(0, 1)); the exact-posterior step targets log_a ~ N(0, 0.5), b ~ N(2, 0.2)" \
  "$WORK/prior.err" || fail "no prior line: $(cat "$WORK/prior.err")"
"$OPTUNA_PYTHON" - "$WORK" <<'PY' || fail "the posterior under --prior"
import json, sys
work = sys.argv[1]
under, refined = json.load(open(f"{work}/prior.json")), json.load(open(f"{work}/refined.json"))
assert under["prior"]["amortized"]["b"] == {"mean": 0.0, "sd": 1.0}, under["prior"]
assert under["prior"]["posterior"]["b"] == {"mean": 2.0, "sd": 0.2}, under["prior"]
# b ~ N(2, 0.2) pulls every item's b towards 2: each posterior mean lies nearer 2 than the one under N(0, 1).
pairs = list(zip(under["items"], refined["items"]))
assert all(abs(u["b"]["mean"] - 2) < abs(r["b"]["mean"] - 2) for u, r in pairs), [(u["b"], r["b"]) for u, r in pairs]
PY
expect_user_error "--prior 'loga=normal(0,1)': the 2pl model has no prior 'loga'. Fix: name one of log_a, b (did you mean 'log_a'?)" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --prior 'loga=normal(0,1)' --out "$WORK/never.csv"
expect_user_error "NAME=normal(MEAN, SD)" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --prior 'b=normal(0)' --out "$WORK/never.csv"
expect_user_error "only the exact-posterior step gives another" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --prior 'b=normal(0, 2)' --refine off --out "$WORK/never.csv"
[ ! -e "$WORK/never.csv" ] || fail "a refused infer wrote its output"
