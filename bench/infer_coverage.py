"""Coverage of `bfhpo infer`'s 95% intervals on data sets simulated from the 2PL prior.

    /usr/bin/python3 bench/infer_coverage.py BFHPO MODEL_DIR [--datasets K] [--items J]
        [--persons P] [--draws N] [--seed S] [--check]

Simulates K data sets (log a_j ~ N(0, 0.5^2), b_j ~ N(0, 1), theta_p ~ N(0, 1),
as models/simulators/irt_simulator.hpp), runs `bfhpo infer` on each, and
prints, for log a and b, the share of the K*J true values inside the 2.5-97.5%
interval with its binomial standard error, and the mean posterior sd against
the prior sd (contraction). With --check it exits 1 when a coverage is more
than 3 binomial standard errors from 0.95 or a posterior is not narrower than
the prior.
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

PRIOR_SD = {"log_a": 0.5, "b": 1.0}


def simulate(path, rng, items, persons):
    log_a, b, theta = rng.normal(0, 0.5, items), rng.normal(0, 1, items), rng.normal(0, 1, persons)
    y = rng.random((persons, items)) < 1 / (1 + np.exp(-np.exp(log_a) * (theta[:, None] - b)))
    with open(path, "w") as f:
        f.write(",".join(f"item{j}" for j in range(items)) + "\n")
        f.writelines(",".join(str(int(v)) for v in row) + "\n" for row in y)
    return {"log_a": log_a, "b": b}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bfhpo")
    parser.add_argument("model")
    parser.add_argument("--datasets", type=int, default=40)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--persons", type=int, default=300)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    covered = {name: 0 for name in PRIOR_SD}
    sds = {name: [] for name in PRIOR_SD}
    total = args.datasets * args.items
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "data.csv")
        for k in range(args.datasets):
            truth = simulate(data, rng, args.items, args.persons)
            out = subprocess.run([args.bfhpo, "infer", args.model, "--data", data, "--draws", str(args.draws),
                                  "--seed", str(args.seed + k)], check=True, capture_output=True, text=True).stdout
            for row in csv.DictReader(io.StringIO(out)):
                name = row["parameter"]
                if name not in PRIOR_SD:
                    continue
                true_value = truth[name][int(row["item"][len("item"):])]
                covered[name] += float(row["q2.5"]) <= true_value <= float(row["q97.5"])
                sds[name].append(float(row["sd"]))
    se = math.sqrt(0.95 * 0.05 / total)
    ok = True
    print(f"{args.datasets} data sets x {args.items} items x {args.persons} persons, {args.draws} draws; "
          f"binomial se of a coverage {se:.4f}")
    for name in PRIOR_SD:
        coverage = covered[name] / total
        contraction = float(np.mean(sds[name])) / PRIOR_SD[name]
        within = abs(coverage - 0.95) <= 3 * se
        ok = ok and within and contraction < 1
        print(f"  {name:6s} 95% coverage {coverage:.4f} ({(coverage - 0.95) / se:+.2f} se), "
              f"mean posterior sd / prior sd {contraction:.3f}")
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
