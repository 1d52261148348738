"""bfhpo's multi-objective TPE against Optuna 5's TPESampler() and NSGAIISampler() defaults.

    PYTHONPATH=path/to/optuna-5-checkout /usr/bin/python3 bench/compare_optuna_multi_objective.py --seeds 40

Problems (bench/mo_test_functions.hpp defines the same, value for value; all
objectives minimized):
  zdt1, zdt2, zdt3  2 objectives, 30 variables in [0, 1] (Zitzler, Deb and
                    Thiele 2000; the size OptunaHub's benchmarks/zdt uses);
                    reference point (1.1, 11)
  dtlz2             3 objectives, 12 variables in [0, 1] (k = 10, Deb et al.
                    2002); reference point (3.85, 3.85, 3.85)
  mixed_training    a synthetic training space: validation error against
                    training cost over log float lr, categorical optimizer
                    (3 choices), int n_layers, log int width, categorical
                    batch size (5 numbers), step float dropout; reference
                    point (5.6, 3.025)
Each reference point is 1.1 times the objectives' upper bounds on the domain,
so every trial counts. The hypervolume of a study is that of all its COMPLETE
trials (Optuna's optuna._hypervolume.compute_hypervolume), at 50 and at 100
trials; seeds 0..N-1. Optuna's samplers run one 100-trial study per seed (the
first 50 trials give the 50-trial figure) and their trials' values are cached
per (Optuna version, sampler, problem, seed) in --cache, so a rerun only runs
what it has not seen. bfhpo (build/bench/bench_mo_tpe_quality) runs one study
per budget (n_trials = 50, 100: its sampler plans for the budget), with its
default sampler (or --sampler) and in Optuna mode ({"preset": "optuna"}), and
reports its own hypervolume of each study, which must match Optuna's
computation of the same values.

Prints per problem and budget the median hypervolume of each, bfhpo / Optuna,
and P(no worse): the share of 2000 bootstrap resamples of the seeds (both
sides) whose bfhpo median is no smaller than Optuna's. Target (issue 27): no
worse than either Optuna sampler on every problem at both budgets, better on most.
"""
import argparse
import json
import math
import os
import statistics
import subprocess

import numpy as np
import optuna
from optuna._hypervolume import compute_hypervolume

from optuna_run_cache import cached_runs, p_no_worse as bootstrap_no_worse

optuna.logging.set_verbosity(optuna.logging.WARNING)

BUDGETS = ("50", "100")
N_TRIALS = 100


def zdt(kind, n=30):
    def objective(trial):
        x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(n)]
        f1 = x[0]
        g = 1.0 + 9.0 * sum(x[1:]) / (n - 1)
        r = f1 / g
        if kind == 1:
            h = 1.0 - math.sqrt(r)
        elif kind == 2:
            h = 1.0 - r * r
        else:
            h = 1.0 - math.sqrt(r) - r * math.sin(10.0 * math.pi * f1)
        return f1, g * h
    return objective


def dtlz2(trial, m=3, n=12):
    x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(n)]
    g = sum((v - 0.5) ** 2 for v in x[m - 1:])
    f = []
    for i in range(m):
        v = 1.0 + g
        for j in range(m - 1 - i):
            v *= math.cos(x[j] * math.pi / 2)
        if i > 0:
            v *= math.sin(x[m - 1 - i] * math.pi / 2)
        f.append(v)
    return tuple(f)


OPTIMIZERS = {"adam": (-3.0, 0.0, 1.1), "rmsprop": (-3.5, 0.02, 1.05), "sgd": (-1.5, 0.08, 1.0)}  # best log10 lr, error offset, cost factor
BATCH_SIZES = [16, 32, 64, 128, 256]


def mixed_training_values(lr, optimizer, n_layers, width, batch_size, dropout):
    """Validation error (best at a large network, the optimizer's lr, dropout growing with size, batch 64) and
    training cost (network size over throughput, which grows with the batch)."""
    best_lr, offset, cost_factor = OPTIMIZERS[optimizer]
    size = n_layers * width  # 16 .. 8192
    error = (0.3 * (math.log10(lr) - best_lr) ** 2 + offset + 1.0 / math.sqrt(size / 16.0)
             + (dropout - 0.4 * math.log2(size / 16.0) / 9.0) ** 2 + 0.02 * (math.log2(batch_size) - 6.0) ** 2)
    cost = cost_factor * size / 8192.0 * (0.5 + 32.0 / batch_size)
    return error, cost


def mixed_training(trial):
    return mixed_training_values(
        trial.suggest_float("lr", 1e-5, 1e-1, log=True),
        trial.suggest_categorical("optimizer", list(OPTIMIZERS)),
        trial.suggest_int("n_layers", 1, 8),
        trial.suggest_int("width", 16, 1024, log=True),
        trial.suggest_categorical("batch_size", BATCH_SIZES),
        trial.suggest_float("dropout", 0.0, 0.5, step=0.05),
    )


PROBLEMS = {
    "zdt1": (zdt(1), (1.1, 11.0)),
    "zdt2": (zdt(2), (1.1, 11.0)),
    "zdt3": (zdt(3), (1.1, 11.0)),
    "dtlz2": (dtlz2, (3.85, 3.85, 3.85)),
    "mixed_training": (mixed_training, (5.6, 3.025)),
}

SAMPLERS = {
    "tpe": ("TPESampler()", lambda seed: optuna.samplers.TPESampler(seed=seed)),
    "nsga2": ("NSGAIISampler()", lambda seed: optuna.samplers.NSGAIISampler(seed=seed)),
}


def hypervolume(values, reference):
    ref = np.asarray(reference, dtype=float)
    points = np.asarray([v for v in values if all(a <= r for a, r in zip(v, reference))], dtype=float)
    if points.size == 0:
        return 0.0
    return float(compute_hypervolume(points, ref))


def optuna_values(sampler, problem, seed):
    objective, reference = PROBLEMS[problem]
    study = optuna.create_study(directions=["minimize"] * len(reference), sampler=SAMPLERS[sampler][1](seed))
    study.optimize(objective, n_trials=N_TRIALS)
    return [list(t.values) for t in study.trials]


def cached_optuna(cache_path, sampler, seeds):
    """{problem: [{budget: hypervolume}] per seed}, running only what the cache lacks."""
    cached = cached_runs(cache_path, SAMPLERS[sampler][0], PROBLEMS, seeds,
                         lambda problem, seed: optuna_values(sampler, problem, seed), "values")
    return {problem: [{n: hypervolume(cached[(problem, seed)][:int(n)], PROBLEMS[problem][1]) for n in BUDGETS}
                      for seed in range(seeds)] for problem in PROBLEMS}


def bfhpo_hypervolumes(build, seeds, sampler):
    """{problem: [{budget: hypervolume}] per seed}; bfhpo's own hypervolume checked against Optuna's."""
    out = subprocess.run([f"{build}/bench/bench_mo_tpe_quality", str(seeds), json.dumps(sampler)], check=True,
                         capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        row = json.loads(line)
        hv = {}
        for n in BUDGETS:
            hv[n] = hypervolume(row["values"][n], PROBLEMS[row["problem"]][1])
            if not math.isclose(hv[n], row["hypervolume"][n], rel_tol=1e-9, abs_tol=1e-12):
                raise SystemExit(f"{row['problem']} seed {row['seed']} at {n}: bfhpo's hypervolume "
                                 f"{row['hypervolume'][n]} differs from Optuna's {hv[n]}")
        rows.setdefault(row["problem"], []).append(hv)
    return rows


def p_no_worse(ours, theirs):
    """Share of bootstrap resamples (of both sides' seeds) where our median hypervolume is >= theirs."""
    return bootstrap_no_worse(ours, theirs, lambda a, b: a > b)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--build", default="build")
    parser.add_argument("--cache", help="Optuna's values per (version, sampler, problem, seed); "
                                        "default BUILD/optuna_mo_quality.jsonl")
    parser.add_argument("--sampler", default='{"type": "tpe"}', help="bfhpo's sampler section to compare")
    parser.add_argument("--optuna-only", action="store_true", help="fill the cache and stop")
    args = parser.parse_args()
    cache = args.cache or os.path.join(args.build, "optuna_mo_quality.jsonl")

    theirs = {name: cached_optuna(cache, name, args.seeds) for name in SAMPLERS}
    if args.optuna_only:
        return
    ours = bfhpo_hypervolumes(args.build, args.seeds, json.loads(args.sampler))
    optuna_mode = bfhpo_hypervolumes(args.build, args.seeds, {"type": "tpe", "preset": "optuna"})
    print(f"median hypervolume of seeds 0..{args.seeds - 1}; optuna {optuna.__version__}; bfhpo {args.sampler}")
    print(f"{'problem':15} {'n':>4} {'bfhpo':>9} {'optuna mode':>11} {'TPE':>9} {'ratio':>6} {'P':>5} "
          f"{'NSGA-II':>9} {'ratio':>6} {'P':>5}")
    verdicts = {name: {"no worse": 0, "better": 0} for name in SAMPLERS}
    cells = 0
    for problem in PROBLEMS:
        for n in BUDGETS:
            a = [r[n] for r in ours[problem]]
            line = (f"{problem:15} {n:>4} {statistics.median(a):9.4f} "
                    f"{statistics.median(r[n] for r in optuna_mode[problem]):11.4f}")
            cells += 1
            for name in SAMPLERS:
                b = [r[n] for r in theirs[name][problem]]
                ratio = statistics.median(a) / statistics.median(b)
                verdicts[name]["no worse"] += ratio >= 1.0
                verdicts[name]["better"] += ratio > 1.0
                line += f" {statistics.median(b):9.4f} {ratio:6.3f} {p_no_worse(a, b):5.2f}"
            print(line)
    for name in SAMPLERS:
        print(f"bfhpo against {SAMPLERS[name][0]}: no worse in {verdicts[name]['no worse']} of {cells} "
              f"(problem, budget) cells, better in {verdicts[name]['better']} (target: no worse in all, better in most)")


if __name__ == "__main__":
    main()
