#!/usr/bin/python3
"""The PostgreSQL storage against the file journal and Optuna's RDBStorage, in one run:

    bash scripts/with-postgres /usr/bin/python3 bench/postgres_storage.py [--asks 30]

1. Ask latency (median, p95 ms) of Study::ask end to end at 100 and 1000
   finished trials (10 float params, TPE): bfhpo on a journal file, bfhpo on
   PostgreSQL (build/bench/bench_study_ask N STORAGE), and Debian's Optuna 3.1
   with RDBStorage on the same server (study.ask with TPESampler(multivariate=True)).
2. 8 workers x 50 ask/tell on PostgreSQL and on a journal
   (build/bench/bench_storage_workers): trials/s, lost trials, overshoot.
Needs BFHPO_TEST_POSTGRES_URL (a superuser URL, as scripts/with-postgres exports).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import optuna
import psycopg2

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
admin = os.environ.get("BFHPO_TEST_POSTGRES_URL")
if not admin:
    sys.exit("BFHPO_TEST_POSTGRES_URL is not set: run under `bash scripts/with-postgres`")
parser = argparse.ArgumentParser()
parser.add_argument("--asks", type=int, default=30)
args = parser.parse_args()
warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def fresh_database(name):
    connection = psycopg2.connect(admin)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        cursor.execute(f"CREATE DATABASE {name}")
    connection.close()
    return admin.rsplit("/", 1)[0] + "/" + name


def bench(*command):
    out = subprocess.run([os.path.join(root, "build", "bench", command[0]), *map(str, command[1:])],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def optuna_ask_ms(url, n):
    distributions = {f"x{d}": optuna.distributions.FloatDistribution(-5.0, 5.0) for d in range(10)}
    study = optuna.create_study(storage=url, study_name="ask",
                                sampler=optuna.samplers.TPESampler(multivariate=True, seed=7))
    rng = __import__("random").Random(7)
    trials = []
    for _ in range(n):
        params = {k: rng.uniform(-5, 5) for k in distributions}
        trials.append(optuna.trial.create_trial(params=params, distributions=distributions,
                                                value=sum(v * v for v in params.values())))
    study.add_trials(trials)
    times = []
    for _ in range(args.asks):
        start = time.perf_counter()
        trial = study.ask(distributions)
        times.append((time.perf_counter() - start) * 1000)
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    times.sort()
    return {"median_ms": statistics.median(times), "p95_ms": times[len(times) * 95 // 100]}


print(f"ask latency, 10 float params, TPE, {args.asks} asks (median / p95 ms)")
print(f"{'trials':>7} {'bfhpo journal':>16} {'bfhpo postgres':>16} {'optuna postgres':>16} "
      f"{'pg/journal':>11} {'optuna/bfhpo pg':>16}")
with tempfile.TemporaryDirectory() as tmp:
    for n in (100, 1000):
        journal = bench("bench_study_ask", n, os.path.join(tmp, "ask.journal"))
        postgres = bench("bench_study_ask", n, fresh_database(f"bench_ask_bfhpo_{n}"))
        theirs = optuna_ask_ms(fresh_database(f"bench_ask_optuna_{n}"), n)
        print(f"{n:>7} {journal['median_ms']:>8.2f} / {journal['p95_ms']:<5.2f} "
              f"{postgres['median_ms']:>8.2f} / {postgres['p95_ms']:<5.2f} "
              f"{theirs['median_ms']:>8.1f} / {theirs['p95_ms']:<5.1f} "
              f"{postgres['median_ms'] / journal['median_ms']:>10.2f}x "
              f"{theirs['median_ms'] / postgres['median_ms']:>15.1f}x")

    print("\n8 workers x 50 ask/tell (random sampler, threads with their own connection)")
    for name, storage in (("postgresql", fresh_database("bench_workers")),
                          ("journal", os.path.join(tmp, "workers.journal"))):
        r = bench("bench_storage_workers", storage, 8, 50)
        print(f"{name:>10}: {r['told']} told in {r['seconds']:.2f} s = {r['trials_per_s']:.0f} trials/s; "
              f"stored {r['stored']}, finished {r['finished']}, distinct numbers {r['distinct_numbers']}, "
              f"lost {r['lost']}, overshoot {r['overshoot']}")
