#!/usr/bin/env bash
# The amortized posterior and infer --refine's exact one against Stan's, on
# real data (issue 29 part 3): for each MODEL DATA STAN triple, `bfhpo infer`
# without and with `--refine auto` (wall seconds of each), then
# bench/compare_with_stan.py of both against Stan's reference
# (bench/stan_reference.R wrote STAN.csv and its sampling time).
#
#   bash bench/refine_vs_stan.sh OUT_DIR MODEL_DIR DATA.csv STAN.csv [MODEL_DIR DATA.csv STAN.csv ...]
#
# MODEL_DIR: what `bfhpo train` wrote (or a training study). Needs a build
# (scripts/build); R only for the STAN.csv files, made beforehand.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"; shift
mkdir -p "$out"
while [ $# -ge 3 ]; do
  model="$1" data="$2" stan="$3"; shift 3
  name="$(basename "$data" .csv)"
  for refine in off auto; do
    start=$EPOCHREALTIME
    "$root/build/bfhpo" infer "$model" --data "$data" --refine "$refine" --check-replications 0 \
      --out "$out/$name.$refine.csv" 2> "$out/$name.$refine.err"
    seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    echo "== $name, --refine $refine: infer $seconds s wall"
    grep -h "^refinement:" "$out/$name.$refine.err" || true
    /usr/bin/python3 "$root/bench/compare_with_stan.py" "$out/$name.$refine.csv" "$stan" --infer-seconds "$seconds" || true
  done
done
