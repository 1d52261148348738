#!/usr/bin/env bash
# Wall and CPU time of one CPU training run with 1 and 2 training threads:
#   bash bench/training_threads.sh [BFHPO] [STUDY] [EPOCHS] [ROUNDS]
# (defaults build/bfhpo, studies/quickstart.json, 3, 3). Each round trains the
# study's fixed configuration with OMP_NUM_THREADS=1, then 2, then 2 with
# OMP_WAIT_POLICY=PASSIVE (OpenMP's threads sleep instead of spinning), and
# prints the medians and the ratio against one thread. Run it on an idle
# machine and beside a load (another training run, a build) to see both sides.
set -euo pipefail
BFHPO="${1:-build/bfhpo}"; STUDY="${2:-studies/quickstart.json}"; EPOCHS="${3:-3}"; ROUNDS="${4:-3}"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
settings=("OMP_NUM_THREADS=1" "OMP_NUM_THREADS=2" "OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE")
for round in $(seq "$ROUNDS"); do
  for i in "${!settings[@]}"; do
    env ${settings[$i]} /usr/bin/time -f "%e %U %S" -o "$WORK/time" \
      "$BFHPO" train "$STUDY" --epochs "$EPOCHS" --out "$WORK/model" > /dev/null 2>&1
    read -r wall user sys < "$WORK/time"
    echo "$i $wall $user $sys" >> "$WORK/runs"
  done
done
echo "load average before the last round: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK/runs" "${settings[@]}" <<'PY'
import statistics, sys
runs = [line.split() for line in open(sys.argv[1])]
settings = sys.argv[2:]
median = {i: (statistics.median(float(r[1]) for r in runs if r[0] == str(i)),
              statistics.median(float(r[2]) + float(r[3]) for r in runs if r[0] == str(i)))
          for i in range(len(settings))}
for i, setting in enumerate(settings):
    wall, cpu = median[i]
    print(f"{setting:<45} wall {wall:7.2f} s  CPU {cpu:7.2f} s  wall / 1 thread {wall / median[0][0]:5.2f}  CPU / 1 thread {cpu / median[0][1]:5.2f}")
PY
