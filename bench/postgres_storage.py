#!/usr/bin/python3
"""The PostgreSQL storage against the file journal and Optuna's RDBStorage, in one run:

    bash scripts/with-postgres /usr/bin/python3 bench/postgres_storage.py [--asks 30] [--optuna5 PATH]

1. Ask latency (median, p95 ms) of Study::ask end to end at 100 and 1000
   finished trials (10 float params, TPE): bfhpo on a journal file, bfhpo on
   PostgreSQL (build/bench/bench_study_ask N STORAGE), and Optuna's
   RDBStorage on the same server (study.ask with TPESampler(multivariate=True)):
   Debian's Optuna 3.1, and with --optuna5 the Optuna source tree at PATH
   (e.g. /work/ref/optuna5), each in its own Python process.
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

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "scripts"))
from postgres_scratch import admin_url, fresh_database  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--asks", type=int, default=30)
parser.add_argument("--optuna5", metavar="PATH", help="an Optuna 5 source tree to measure beside Debian's 3.1")
parser.add_argument("--optuna-ask", nargs=2, metavar=("URL", "N"), help=argparse.SUPPRESS)  # the child's job
args = parser.parse_args()


def optuna_ask_ms(url, n):
    """Optuna's study.ask on RDBStorage at `url` holding n COMPLETE trials (runs in the child)."""
    import optuna
    warnings.simplefilter("ignore")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
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
    return {"median_ms": statistics.median(times), "p95_ms": times[len(times) * 95 // 100],
            "version": optuna.__version__}


if args.optuna_ask:
    print(json.dumps(optuna_ask_ms(args.optuna_ask[0], int(args.optuna_ask[1]))))
    sys.exit(0)
if not admin_url():
    sys.exit("BFHPO_TEST_POSTGRES_URL is not set: run under `bash scripts/with-postgres`")


def bench(*command):
    out = subprocess.run([os.path.join(root, "build", "bench", command[0]), *map(str, command[1:])],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def optuna_in_child(pythonpath, url, n):
    environment = dict(os.environ, PYTHONPATH=pythonpath)
    out = subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), "--asks", str(args.asks),
                          "--optuna-ask", url, str(n)], check=True, capture_output=True, text=True,
                         env=environment).stdout
    return json.loads(out.strip().splitlines()[-1])


optunas = [("3.1", "")] + ([("5", args.optuna5)] if args.optuna5 else [])
print(f"ask latency, 10 float params, TPE, {args.asks} asks each (median / p95 ms)")
header = f"{'trials':>7} {'bfhpo journal':>16} {'bfhpo postgres':>16} {'pg/journal':>11}"
for name, _ in optunas:
    header += f" {'optuna ' + name + ' postgres':>21} {'/ bfhpo pg':>11}"
print(header)
with tempfile.TemporaryDirectory() as tmp:
    for n in (100, 1000):
        journal = bench("bench_study_ask", n, os.path.join(tmp, "ask.journal"))
        postgres = bench("bench_study_ask", n, fresh_database(f"ask_bfhpo_{n}"))
        row = (f"{n:>7} {journal['median_ms']:>8.2f} / {journal['p95_ms']:<5.2f} "
               f"{postgres['median_ms']:>8.2f} / {postgres['p95_ms']:<5.2f} "
               f"{postgres['median_ms'] / journal['median_ms']:>10.2f}x")
        for name, pythonpath in optunas:
            theirs = optuna_in_child(pythonpath, fresh_database(f"ask_optuna{name.replace('.', '')}_{n}"), n)
            row += (f" {theirs['median_ms']:>12.1f} / {theirs['p95_ms']:<6.1f}"
                    f" {theirs['median_ms'] / postgres['median_ms']:>10.1f}x")
        print(row, flush=True)
    for name, pythonpath in optunas:
        version = subprocess.run(["/usr/bin/python3", "-c", "import optuna; print(optuna.__version__)"],
                                 capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=pythonpath)).stdout
        print(f"optuna {name}: {version.strip()}")

    print("\n8 workers x 50 ask/tell (random sampler, threads with their own connection)")
    for name, storage in (("postgresql", fresh_database("workers")),
                          ("journal", os.path.join(tmp, "workers.journal"))):
        r = bench("bench_storage_workers", storage, 8, 50)
        print(f"{name:>10}: {r['told']} told in {r['seconds']:.2f} s = {r['trials_per_s']:.0f} trials/s; "
              f"stored {r['stored']}, finished {r['finished']}, distinct numbers {r['distinct_numbers']}, "
              f"lost {r['lost']}, overshoot {r['overshoot']}", flush=True)
