#!/usr/bin/env bash
# Does a network trained on a range of persons generalise across it? Issue 29
# part 2: the amortized posterior should contract with more persons as
# Stan's does. Trains one 2PL on 15 items and [P_MIN, P_MAX] persons with
# `bfhpo train`, simulates response files of the same 15 items at several
# person counts (the study's priors, seed 7), and for each prints the median
# posterior sd of log a and b from `bfhpo infer` beside Stan's NUTS on the
# same file (bench/stan_reference.R), with bench/compare_with_stan.py's
# agreement figures.
#
#   bash bench/person_range.sh [OUT_DIR /tmp/person-range] [EPOCHS 30] [P_MIN 100] [P_MAX 1000] [PERSONS "100 300 1000"]
#
# ITEM_FIT=true in the environment trains with summary.item_fit (as init's
# studies do).
# Needs a build (scripts/build) and R with rstan (bench/README.md, Agreement
# with Stan). Training takes EPOCHS x 40 steps of 16 data sets.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/tmp/person-range}"
epochs="${2:-30}"; p_min="${3:-100}"; p_max="${4:-1000}"; persons="${5:-100 300 1000}"
bfhpo="$root/build/bfhpo"
mkdir -p "$out"
cat > "$out/study.json" <<JSON
{"name": "person-range", "direction": "minimize", "seed": 3,
 "simulator": {"model": "2pl", "n_items": [15, 15], "n_persons": [$p_min, $p_max]},
 "training": {"epochs": $epochs, "num_batches": 40, "batch_size": 16, "learning_rate": 1e-3,
              "validation_sims": 32, "device": "cpu"},
 "approximator": {"summary": {"attention_layers": 1, "item_fit": ${ITEM_FIT:-false}}, "flow": {"depth": 4}},
 "memory": {"budget_mb": "auto"}}
JSON
echo "person_range: training on 15 items x [$p_min, $p_max] persons, $epochs epochs ($out/model)" >&2
start=$(date +%s)
[ -e "$out/model/weights.pt" ] || "$bfhpo" train "$out/study.json" --out "$out/model" >"$out/train.log" 2>&1
echo "person_range: trained in $(( $(date +%s) - start )) s" >&2
python3 - "$out" $persons <<'PY'
import csv, math, random, sys
out, counts = sys.argv[1], [int(p) for p in sys.argv[2:]]
rng = random.Random(7)
items = [(rng.gauss(0, 0.5), rng.gauss(0, 1)) for _ in range(15)]
for persons in counts:
    with open(f"{out}/responses-{persons}.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id"] + [f"Q{j + 1}" for j in range(15)])
        for p in range(persons):
            theta = rng.gauss(0, 1)
            w.writerow([p + 1] + [int(rng.random() < 1 / (1 + math.exp(-math.exp(la) * (theta - b)))) for la, b in items])
PY
printf "%8s %22s %22s %12s %12s\n" persons "median sd log a (ours/Stan)" "median sd b (ours/Stan)" "infer s" "Stan s"
for p in $persons; do
  data="$out/responses-$p.csv"
  t0=$(date +%s.%N)
  "$bfhpo" infer "$out/model" --data "$data" --format csv --out "$out/bfhpo-$p.csv" 2>/dev/null
  infer_s=$(python3 -c "print($(date +%s.%N) - $t0)")
  [ -e "$out/stan-$p.csv" ] || Rscript "$root/bench/stan_reference.R" "$data" 2pl "$out/stan-$p.csv" >"$out/stan-$p.log" 2>&1
  python3 - "$out/bfhpo-$p.csv" "$out/stan-$p.csv" "$p" "$infer_s" <<'PY'
import csv, statistics, sys
ours, stan, persons, infer_s = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
def sds(path, parameter):
    return [float(r["sd"]) for r in csv.DictReader(open(path)) if r["parameter"] == parameter]
stan_rows = list(csv.DictReader(open(stan)))
line = [f"{persons:>8}"]
for parameter in ("log_a", "b"):
    o, s = statistics.median(sds(ours, parameter)), statistics.median(sds(stan, parameter))
    line.append(f"{o:>10.3f} / {s:<9.3f}")
line.append(f"{infer_s:>12.2f} {float(stan_rows[0]['seconds']):>12.1f}")
print(" ".join(line))
PY
  python3 "$root/bench/compare_with_stan.py" "$out/bfhpo-$p.csv" "$out/stan-$p.csv" --infer-seconds "$infer_s" | sed "s/^/    /" || true
done
