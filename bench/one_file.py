#!/usr/bin/env python3
"""One file, no training, against Stan by the clock (issue 41 part 6):

    /usr/bin/python3 bench/one_file.py BFHPO OUT_DIR MODEL:FILE [MODEL:FILE ...]
        [--refine auto] [--chains 4] [--iter 2000] [--no-stan]

For each response FILE: one fresh `BFHPO infer --model MODEL --data FILE
--refine auto` (a shipped estimator; the process's whole wall time, LibTorch's
loading included), then bench/laplace_reference.R and bench/stan_reference.R
(4 chains x 1,000 draws after 1,000 warm-up) on the same file with the
priors of the estimator infer chose (its config.json), and
bench/compare_with_stan.py: issue 29's agreement targets for the items, issue
40's for the persons, Laplace beside bfhpo. The closing table puts bfhpo's
wall time beside Stan's sampling time (its compilation left out, which
favours Stan) and their ratio; part 6 asks for a tenth or less.

Stan's and Laplace's outputs are kept in OUT_DIR and reused by a later run
(delete them to measure Stan again). Real files: `Rscript bench/real_data.R
DIR` writes ability.csv (1,525 x 16 binary, 4.7% missing) and
bfi_neuroticism_300.csv (300 x 5, 6 categories)."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_groups  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def run_infer(bfhpo, model, data, out_prefix, refine):
    """(wall seconds, the estimator's folder) of one `bfhpo infer --model`"""
    command = [bfhpo, "infer", "--model", model, "--data", data, "--refine", refine, "--out", out_prefix + ".csv",
               "--persons-out", out_prefix + "_persons.csv"]
    print(" ".join(command), flush=True)
    started = time.monotonic()
    done = subprocess.run(command, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        sys.exit(f"bfhpo infer exited {done.returncode}")
    chosen = re.search(r"^estimator: the shipped \S+ \(([^;]+);", done.stderr, re.MULTILINE)
    if not chosen:
        sys.exit("bfhpo infer did not say which estimator it used")
    return wall, chosen.group(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bfhpo")
    parser.add_argument("out_dir")
    parser.add_argument("files", nargs="+", metavar="MODEL:FILE")
    parser.add_argument("--refine", default="auto", help="infer's --refine")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--iter", type=int, default=2000)
    parser.add_argument("--no-stan", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    rows = []
    for spec in args.files:
        model, _, data = spec.partition(":")
        if model not in ("2pl", "grm") or not data:
            sys.exit(f"{spec}: give MODEL:FILE, MODEL 2pl or grm")
        name = os.path.splitext(os.path.basename(data))[0]
        prefix = os.path.join(args.out_dir, name)
        wall, estimator = run_infer(args.bfhpo, model, data, prefix + ".bfhpo", args.refine)
        simulator = json.load(open(os.path.join(estimator, "config.json")))["simulator"]
        env = real_groups.prior_environment(simulator)
        real_groups.run_reference("laplace_reference.R", data, model, prefix + ".laplace.csv",
                                  prefix + ".laplace_persons.csv", [], env)
        if args.no_stan:
            rows.append((name, wall, None, None))
            continue
        real_groups.run_reference("stan_reference.R", data, model, prefix + ".stan.csv", prefix + ".stan_persons.csv",
                                  [str(args.chains), str(args.iter)], env)
        compare = [sys.executable, os.path.join(HERE, "compare_with_stan.py"), prefix + ".bfhpo.csv",
                   prefix + ".stan.csv", "--infer-seconds", f"{wall:.3f}", "--laplace", prefix + ".laplace.csv",
                   "--persons", prefix + ".bfhpo_persons.csv", prefix + ".stan_persons.csv",
                   "--laplace-persons", prefix + ".laplace_persons.csv"]
        print(f"\n{name} ({model}, estimator {estimator}):", flush=True)
        met = subprocess.run(compare).returncode == 0
        stan_seconds = float(real_groups.compare.read(prefix + ".stan.csv").popitem()[1]["seconds"])
        rows.append((name, wall, stan_seconds, met))
    print(f"\n{'file':<28} {'bfhpo infer (s)':>15} {'Stan sampling (s)':>17} {'bfhpo / Stan':>12} {'targets':>8}")
    for name, wall, stan_seconds, met in rows:
        if stan_seconds is None:
            print(f"{name:<28} {wall:>15.2f} {'(not asked)':>17}")
            continue
        print(f"{name:<28} {wall:>15.2f} {stan_seconds:>17.1f} {wall / stan_seconds:>12.3f} {'met' if met else 'missed':>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
