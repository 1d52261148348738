"""Many data sets through one `bfhpo infer` call: calibration and speed (issue 40).

    /usr/bin/python3 bench/infer_many.py BFHPO MODEL_DIR [--datasets 1000] [--items 20] [--persons 500]
        [--draws 200] [--plausible-values 99] [--seed 1] [--stan 10] [--refine importance] [--keep DIR]

Simulates K data sets from the prior the estimator in MODEL_DIR trained on
(its config.json: 2PL or graded, the study's priors, abilities N(0, 1)),
writes them to one folder, and times one `bfhpo infer MODEL_DIR --data FOLDER`
(the model check on, the default importance step, person scores with
plausible values). Then simulation-based calibration (Talts et al. 2018) of
every item parameter and of every person's ability: the coverage of the
central 50/80/95% intervals (items from the draws, persons from the plausible
values), with their binomial standard errors, and the rank of each true value
among its draws in 20 bins with a chi-square test of uniformity. With
Rscript and rstan on the machine (bench only: Debian's r-cran-rstan), Stan's
NUTS (bench/stan_reference.R, 4 chains x 1,000 draws) fits the first --stan
data sets in the same run, and its mean sampling time a data set (the
model's compilation left out) is projected to K.
"""
import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

LEVELS = (0.50, 0.80, 0.95)
BINS = 20


def simulate(folder, config, k_sets, items, persons, rng):
    """K response files in `folder`; the truth: item parameters by name [K, J] and abilities [K, P]."""
    sim = config["simulator"]
    model, priors = sim["model"], sim.get("priors", {})
    prior = lambda name, mean, sd: (priors.get(name, {}).get("mean", mean), priors.get(name, {}).get("sd", sd))
    if model not in ("2pl", "grm"):
        sys.exit(f"infer_many.py: the {model} model is not simulated here (2pl, grm)")
    la_mean, la_sd = prior("log_a", 0.0, 0.5)
    truth = {"log_a": rng.normal(la_mean, la_sd, (k_sets, items)), "theta": rng.normal(0, 1, (k_sets, persons))}
    if model == "2pl":
        b_mean, b_sd = prior("b", 0.0, 1.0)
        truth["b"] = rng.normal(b_mean, b_sd, (k_sets, items))
        thresholds = truth["b"][:, :, None]
    else:
        t_mean, t_sd = prior("thresholds", 0.0, 1.0)
        thresholds = np.sort(rng.normal(t_mean, t_sd, (k_sets, items, sim["n_categories"] - 1)), axis=-1)
        for c in range(thresholds.shape[-1]):
            truth[f"b{c + 1}"] = thresholds[:, :, c]
    a = np.exp(truth["log_a"])
    for k in range(k_sets):
        # P(y >= c) for c = 1..K-1, then one uniform per cell counts the thresholds passed.
        above = 1 / (1 + np.exp(-a[k][None, :, None] * (truth["theta"][k][:, None, None] - thresholds[k][None])))
        y = (rng.random((persons, items))[:, :, None] < above).sum(-1)
        with open(os.path.join(folder, f"set{k:05d}.csv"), "w") as f:
            f.write(",".join(f"item{j}" for j in range(items)) + "\n")
            f.writelines(",".join(map(str, row)) + "\n" for row in y)
    return truth


def ranks_and_coverage(rank_fraction):
    """Coverage of each central interval and the rank histogram's chi-square p, from the truths' ranks in [0, 1]."""
    r = np.asarray(rank_fraction)
    coverage = {level: float(np.mean(np.abs(r - 0.5) <= level / 2)) for level in LEVELS}
    counts = np.histogram(r, bins=BINS, range=(0, 1))[0]
    expected = len(r) / BINS
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    return coverage, chi2, counts


def chi2_p(chi2, dof):
    """Upper tail of the chi-square distribution (Wilson-Hilferty), enough for a flag."""
    z = ((chi2 / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


def report(name, ranks):
    coverage, chi2, counts = ranks_and_coverage(ranks)
    n = len(ranks)
    cells = "  ".join(f"{int(100 * l)}% {100 * c:5.1f} ({(c - l) / math.sqrt(l * (1 - l) / n):+.1f} se)"
                      for l, c in coverage.items())
    print(f"  {name:8s} n {n:7d}  {cells}  ranks chi2({BINS - 1}) {chi2:6.1f} p {chi2_p(chi2, BINS - 1):.3f}")
    return coverage


def stan_seconds(folder, model, n, config, work):
    """Mean seconds of Stan's NUTS a data set over the first n files; None without Rscript and rstan."""
    if n <= 0 or shutil.which("Rscript") is None:
        return None
    if subprocess.run(["Rscript", "-e", "library(rstan)"], capture_output=True).returncode != 0:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    priors = config["simulator"].get("priors", {})
    env = dict(os.environ)
    for name, key in (("log_a", "LOG_A"), ("b", "B")):
        if name in priors:
            env[f"{key}_MEAN"], env[f"{key}_SD"] = str(priors[name]["mean"]), str(priors[name]["sd"])
    seconds = []
    for k in range(n):
        out = os.path.join(work, f"stan{k}.csv")
        subprocess.run(["Rscript", os.path.join(here, "stan_reference.R"), os.path.join(folder, f"set{k:05d}.csv"),
                        model, out, "4", "2000"], check=True, env=env, capture_output=True)
        # Sampling only (the script's own clock): the model's compilation, once a process here, is left out.
        with open(out) as f:
            seconds.append(float(next(csv.DictReader(f))["seconds"]))
    return float(np.mean(seconds))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bfhpo")
    parser.add_argument("model")
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--persons", type=int, default=500)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--plausible-values", type=int, default=99)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stan", type=int, default=10)
    parser.add_argument("--refine", default="importance")
    parser.add_argument("--keep", metavar="DIR", help="copy the data sets and infer's outputs into DIR (new)")
    args = parser.parse_args()
    if args.keep and os.path.exists(args.keep):
        sys.exit(f"infer_many.py: --keep {args.keep}: it exists. Fix: name a new folder")

    config = json.load(open(os.path.join(args.model, "config.json")))
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as work:
        folder = os.path.join(work, "sets")
        os.mkdir(folder)
        truth = simulate(folder, config, args.datasets, args.items, args.persons, rng)
        out = {name: os.path.join(work, f"{name}.csv") for name in ("summary", "draws", "persons", "datasets")}
        command = [args.bfhpo, "infer", args.model, "--data", folder, "--draws", str(args.draws), "--seed",
                   str(args.seed), "--refine", args.refine, "--out", out["summary"], "--draws-out", out["draws"],
                   "--persons-out", out["persons"], "--plausible-values", str(args.plausible_values),
                   "--datasets-out", out["datasets"]]
        start = time.monotonic()
        run = subprocess.run(command, capture_output=True, text=True)
        wall = time.monotonic() - start
        if run.returncode != 0:
            sys.exit(f"infer exited {run.returncode}: {run.stderr[-2000:]}")

        item_ranks = {}
        values = {}
        with open(out["draws"]) as f:
            reader = csv.reader(f)
            header = next(reader)
            names = header[3:-1]
            for row in reader:
                key = (int(row[0][3:]), int(row[1][4:]))
                values.setdefault(key, []).append([float(v) for v in row[3:-1]])
        item_sets = {}
        for (k, j), draws in values.items():
            draws = np.asarray(draws)
            for d, name in enumerate(names):
                rank = (np.sum(draws[:, d] < truth[name][k, j]) + rng.random() * (1 + np.sum(draws[:, d] == truth[name][k, j]))) / (len(draws) + 1)
                item_ranks.setdefault(name, []).append(rank)
                item_sets.setdefault(name, []).append(k)
        person_ranks = []
        with open(out["persons"]) as f:
            reader = csv.DictReader(f)
            pv_columns = [c for c in reader.fieldnames if c.startswith("pv")]
            for row in reader:
                k, p = int(row["dataset"][3:]), int(row["person"]) - 1
                pvs = np.array([float(row[c]) for c in pv_columns])
                person_ranks.append((np.sum(pvs < truth["theta"][k, p]) + rng.random()) / (len(pvs) + 1))
        paths, path_of = {}, {}
        with open(out["datasets"]) as f:
            for row in csv.DictReader(f):
                paths[row["path"]] = paths.get(row["path"], 0) + 1
                path_of[int(row["dataset"][3:])] = row["path"]
        stan = stan_seconds(folder, config["simulator"]["model"], args.stan, config, work)
        if args.keep:
            shutil.copytree(work, args.keep)

    print(f"{args.datasets} data sets of {args.persons} persons x {args.items} items "
          f"({config['simulator']['model']}), {args.draws} draws, {args.plausible_values} plausible values, "
          f"--refine {args.refine}")
    print(f"one bfhpo infer call: {wall:.1f} s wall ({1000 * wall / args.datasets:.0f} ms a data set); paths {paths}")
    for line in run.stderr.splitlines():
        if line.startswith(("paths:", "model check:")):
            print(f"  {line}")
    if args.stan <= 0:
        print("Stan: not asked (--stan 0)")
    elif stan is None:
        print("Stan: not run (needs Rscript with rstan: apt-get install r-cran-rstan)")
    else:
        projected = stan * args.datasets
        print(f"Stan NUTS (4 x 1,000) on {args.stan} of the data sets: {stan:.1f} s each sampling (compilation left "
              f"out), {projected:.0f} s projected "
              f"to {args.datasets}; bfhpo is {projected / wall:.0f}x faster")
    print("calibration (coverage of central intervals, nominal 50/80/95%; rank histogram of the truths):")
    for name in names:
        report(name, item_ranks[name])
    report("theta", person_ranks)
    if len(paths) > 1:
        print("the items by the path their data set took:")
        for path in sorted(paths):
            for name in names:
                ranks = [r for r, k in zip(item_ranks[name], item_sets[name]) if path_of.get(k) == path]
                report(f"{name} {path}"[:22], ranks)


if __name__ == "__main__":
    main()
