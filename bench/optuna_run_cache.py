"""What the comparisons with Optuna share: Optuna's results cached per (Optuna version,
sampler, problem, seed) in a JSON-lines file, so a rerun runs only the seeds it has not
seen, and the bootstrap probability that bfhpo's median is no worse than Optuna's."""
import json
import os
import random
import statistics


def cached_runs(cache_path, description, problems, seeds, run, field):
    """{(problem, seed): run(problem, seed)} for seeds 0..seeds-1, reading what the cache at
    `cache_path` holds for this Optuna version and sampler `description` under `field`, and
    appending what it lacks."""
    import optuna
    version = optuna.__version__
    cached = {}
    if os.path.exists(cache_path):
        with open(cache_path) as f:
            for line in f:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:  # a line cut short by an interrupted run
                    continue
                if row["optuna"] == version and row["sampler"] == description:
                    cached[(row["problem"], row["seed"])] = row[field]
    with open(cache_path, "a") as f:
        for seed in range(seeds):
            for problem in problems:
                if (problem, seed) not in cached:
                    cached[(problem, seed)] = run(problem, seed)
                    f.write(json.dumps({"optuna": version, "sampler": description, "problem": problem, "seed": seed,
                                        field: cached[(problem, seed)]}) + "\n")
                    f.flush()
    return cached


def p_no_worse(ours, theirs, better, resamples=2000):
    """Share of bootstrap resamples (of both sides' seeds) where better(our median, their
    median) or the medians are equal."""
    rng = random.Random(0)
    wins = 0
    for _ in range(resamples):
        a = statistics.median(rng.choice(ours) for _ in ours)
        b = statistics.median(rng.choice(theirs) for _ in theirs)
        wins += a == b or better(a, b)
    return wins / resamples
