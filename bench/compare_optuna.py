"""bfhpo against Optuna in one run: sampler quality and ask latency.

    PYTHONPATH=path/to/optuna-5-checkout /usr/bin/python3 bench/compare_optuna.py --seeds 40
    /usr/bin/python3 bench/compare_optuna.py --seeds 10        # against Debian's Optuna 3.1

Quality: the `import optuna` found runs its TPESampler with its defaults
(Optuna >= 4: multivariate and constant liar are on by default; Optuna 3.x:
TPESampler(multivariate=True)) on Sphere, Rosenbrock, Rastrigin,
Styblinski-Tang, Ackley and Levy in 5-D and on a mixed HPO-like conditional
space (log float, categorical with a conditional float, int, log int, step
float, log float), 100 trials, seeds 0..N-1; the best value after 25, 50 and
100 trials comes from one run. Optuna's results are cached per (Optuna
version, problem, seed) in a file (--cache), so a rerun only runs the seeds
it has not seen. bfhpo runs each budget as its own study (n_trials = 25, 50,
100: the sampler may plan for the budget it is given), with its default
sampler and in Optuna mode ({"preset": "optuna"}: Optuna 3.1's algorithm).
Prints the median best value per problem and budget, whether bfhpo's default
is no worse than Optuna, and P(no worse): the share of bootstrap resamples of
the seeds (both sides, 2000 resamples) whose bfhpo median is no worse than
Optuna's. Targets (issue 16): no worse on at least 5 of the 6 functions at
each budget, better on the mixed space at 25 and 50.

Latency: one ask with 10 float params at 100, 1000 and 10,000 finished trials
(median, p95) and the ratio (target at 1000: bfhpo <= 1 ms and >= 50x
faster).
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import time

import optuna

from optuna_run_cache import cached_runs, p_no_worse as bootstrap_no_worse

optuna.logging.set_verbosity(optuna.logging.WARNING)

BUDGETS = ("25", "50", "100")


def levy(x):
    w = [1 + (v - 1) / 4 for v in x]
    s = math.sin(math.pi * w[0]) ** 2
    s += sum((wi - 1) ** 2 * (1 + 10 * math.sin(math.pi * wi + 1) ** 2) for wi in w[:-1])
    return s + (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)


FUNCTIONS = {
    "sphere": (-5.12, 5.12, lambda x: sum(v * v for v in x)),
    "rosenbrock": (-5.0, 10.0, lambda x: sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1))),
    "rastrigin": (-5.12, 5.12, lambda x: 10 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x)),
    "styblinski_tang": (-5.0, 5.0, lambda x: sum(0.5 * (v ** 4 - 16 * v * v + 5 * v) + 39.16616570377142 for v in x)),
    "ackley": (-32.768, 32.768, lambda x: -20 * math.exp(-0.2 * math.sqrt(sum(v * v for v in x) / len(x)))
               - math.exp(sum(math.cos(2 * math.pi * v) for v in x) / len(x)) + 20 + math.e),
    "levy": (-10.0, 10.0, levy),
}


def hpo_mixed_loss(lr, optimizer, momentum, n_layers, width, dropout, weight_decay):
    """bench/test_functions.hpp's hpo_mixed: minimum 0 at adam, lr 1e-3, 3 layers of 512, dropout 0.2, wd 1e-4."""
    if optimizer == "adam":
        lr_term, optimizer_term = 0.5 * (math.log10(lr) + 3.0) ** 2, 0.0
    else:  # sgd: the effective step lr / (1 - momentum) matters, best at 0.1; momentum near 0.9 a little better
        lr_term = 0.5 * (math.log10(lr / (1.0 - momentum)) + 1.0) ** 2
        optimizer_term = 0.05 + 0.5 * (momentum - 0.9) ** 2
    width_term = 0.1 * (math.log2(width) - (6 + n_layers)) ** 2
    depth_term = 0.05 * (n_layers - 3) ** 2
    dropout_term = 2.0 * (dropout - 0.1 - 0.05 * (n_layers - 1)) ** 2
    decay_term = 0.05 * (math.log10(weight_decay) + 4.0) ** 2
    return lr_term + optimizer_term + width_term + depth_term + dropout_term + decay_term


def hpo_mixed(trial):
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    optimizer = trial.suggest_categorical("optimizer", ["adam", "sgd"])
    momentum = trial.suggest_float("momentum", 0.0, 0.99) if optimizer == "sgd" else 0.0
    n_layers = trial.suggest_int("n_layers", 1, 5)
    width = trial.suggest_int("width", 16, 1024, log=True)
    dropout = trial.suggest_float("dropout", 0.0, 0.5, step=0.05)
    weight_decay = trial.suggest_float("weight_decay", 1e-6, 1e-2, log=True)
    return hpo_mixed_loss(lr, optimizer, momentum, n_layers, width, dropout, weight_decay)


def objective_of(name):
    if name == "hpo_mixed":
        return hpo_mixed
    low, high, f = FUNCTIONS[name]
    return lambda trial: f([trial.suggest_float(f"x{d}", low, high) for d in range(5)])


PROBLEMS = list(FUNCTIONS) + ["hpo_mixed"]


def optuna_sampler(seed):
    if int(optuna.__version__.split(".")[0]) >= 4:
        return optuna.samplers.TPESampler(seed=seed), "TPESampler()"
    return optuna.samplers.TPESampler(multivariate=True, seed=seed), "TPESampler(multivariate=True)"


def optuna_quality(name, seed):
    sampler, _ = optuna_sampler(seed)
    study = optuna.create_study(sampler=sampler)
    objective = objective_of(name)
    best, marks = math.inf, {}
    for n in range(1, 101):
        trial = study.ask()
        value = objective(trial)
        study.tell(trial, value)
        best = min(best, value)
        if str(n) in BUDGETS:
            marks[str(n)] = best
    return marks


def cached_optuna_quality(cache_path, seeds):
    """{problem: [best per seed]} for seeds 0..seeds-1, running only what the cache lacks (seed by seed)."""
    cached = cached_runs(cache_path, optuna_sampler(0)[1], PROBLEMS, seeds, optuna_quality, "best")
    return {name: [cached[(name, seed)] for seed in range(seeds)] for name in PROBLEMS}


def bfhpo_quality(build, seeds, sampler, first_seed=0, workers=1):
    out = subprocess.run([f"{build}/bench/bench_tpe_quality", str(seeds), json.dumps(sampler), str(first_seed), "",
                          str(workers)], check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        row = json.loads(line)
        rows.setdefault(row["function"], []).append(row["best"])
    return rows


def p_no_worse(ours, theirs):
    """Share of bootstrap resamples (of both sides' seeds) where our median is <= theirs."""
    return bootstrap_no_worse(ours, theirs, lambda a, b: a < b)


def compare_liars(args):
    """bfhpo's default against its sampler with Optuna's full-weight liars, both with --workers asking at once."""
    sampler = json.loads(args.sampler)
    ours = bfhpo_quality(args.build, args.seeds, sampler, args.first_seed, args.workers)
    theirs = bfhpo_quality(args.build, args.seeds, {**sampler, "liar_weight": "optuna"}, args.first_seed, args.workers)
    print(f"median best of seeds {args.first_seed}..{args.first_seed + args.seeds - 1}, {args.workers} workers; "
          f"bfhpo {args.sampler} against the same with liar_weight optuna")
    print(f"{'problem':16} {'n':>4} {'bfhpo':>11} {'optuna liars':>13} {'P(no worse)':>12}")
    for name in PROBLEMS:
        for n in BUDGETS:
            a = [r[n] for r in ours[name]]
            b = [r[n] for r in theirs[name]]
            print(f"{name:16} {n:>4} {statistics.median(a):11.4f} {statistics.median(b):13.4f} {p_no_worse(a, b):12.2f}")


def optuna_latency(n, repeats):
    study = optuna.create_study(sampler=optuna_sampler(0)[0])
    dists = {f"x{d}": optuna.distributions.FloatDistribution(-5.0, 5.0) for d in range(10)}
    rng = random.Random(7)
    for _ in range(n):
        params = {k: rng.uniform(-5, 5) for k in dists}
        study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=sum(v * v for v in params.values())))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        trial = study.ask(fixed_distributions=dists)
        times.append((time.perf_counter() - start) * 1000)
        study.tell(trial, state=optuna.trial.TrialState.FAIL)  # FAIL trials are ignored by TPE
    times.sort()
    return {"median_ms": times[len(times) // 2], "p95_ms": times[min(len(times) - 1, len(times) * 95 // 100)]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--build", default="build")
    parser.add_argument("--cache", help="Optuna's results per (version, problem, seed); default BUILD/optuna_quality.jsonl")
    parser.add_argument("--sampler", default='{"type": "tpe"}', help="bfhpo's sampler section to compare")
    parser.add_argument("--optuna-only", action="store_true", help="fill the cache and stop")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--workers", type=int, default=1,
                        help="> 1: bfhpo alone with this many workers asking at once, its liar weights against "
                             "Optuna's (liar_weight optuna), seeds from --first-seed")
    parser.add_argument("--first-seed", type=int, default=0, help="with --workers")
    args = parser.parse_args()
    if args.workers > 1:
        compare_liars(args)
        return
    cache = args.cache or os.path.join(args.build, "optuna_quality.jsonl")

    if not args.skip_quality:
        theirs = cached_optuna_quality(cache, args.seeds)
        if args.optuna_only:
            return
        ours = bfhpo_quality(args.build, args.seeds, json.loads(args.sampler))
        optuna_mode = bfhpo_quality(args.build, args.seeds, {"type": "tpe", "preset": "optuna"})
        print(f"median best of seeds 0..{args.seeds - 1}; optuna {optuna.__version__} {optuna_sampler(0)[1]}; "
              f"bfhpo {args.sampler}")
        print(f"{'problem':16} {'n':>4} {'bfhpo':>11} {'bfhpo optuna mode':>18} {'optuna':>11} {'P(no worse)':>12}")
        wins = {n: 0 for n in BUDGETS}
        for name in PROBLEMS:
            for n in BUDGETS:
                a = [r[n] for r in ours[name]]
                b = [r[n] for r in theirs[name]]
                m = statistics.median(r[n] for r in optuna_mode[name])
                no_worse = statistics.median(a) <= statistics.median(b)
                if name in FUNCTIONS:
                    wins[n] += no_worse
                print(f"{name:16} {n:>4} {statistics.median(a):11.4f} {m:18.4f} {statistics.median(b):11.4f} "
                      f"{p_no_worse(a, b):12.2f}{'' if no_worse else '  worse'}")
        for n in BUDGETS:
            print(f"at {n:>3} trials bfhpo no worse than optuna on {wins[n]} of {len(FUNCTIONS)} functions (target 5)")

    if args.skip_latency:
        return
    out = subprocess.run([f"{args.build}/bench/bench_ask_latency", "50"], check=True, capture_output=True,
                         text=True).stdout
    ours = {row["n_trials"]: row for row in map(json.loads, out.splitlines())}
    print(f"{'finished':>9} {'bfhpo median':>13} {'p95':>8} {'optuna median':>14} {'p95':>8} {'speedup':>8}")
    for n in (100, 1000, 10000):
        theirs = optuna_latency(n, repeats=20 if n < 10000 else 5)
        a = ours[n]
        print(f"{n:9d} {a['median_ms']:11.3f}ms {a['p95_ms']:6.3f}ms {theirs['median_ms']:12.3f}ms "
              f"{theirs['p95_ms']:6.1f}ms {theirs['median_ms'] / a['median_ms']:7.1f}x")
    print("target at 1000 finished trials: bfhpo median <= 1 ms and >= 50x faster than optuna")


if __name__ == "__main__":
    main()
