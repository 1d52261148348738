#!/usr/bin/python3
"""Whole-process latency of bfhpo's study verbs against Python + Optuna.

Each round times, interleaved, one process of each:
  bfhpo ask STUDY.json         vs  python: import optuna, load the journal, ask (TPE, 4 params)
  bfhpo tell STUDY.json ...    vs  python: import optuna, load the journal, tell
  bfhpo status STUDY.json      vs  python: import optuna, load the journal, print counts and best
on the same study of N finished trials (written by bfhpo; Optuna reads bfhpo's
journal unchanged), each side on its own copy of the journal. Prints the
median wall and CPU (user + system) milliseconds per operation, Optuna's
over bfhpo's, and the load average (CPU time is the figure to trust on a
loaded machine; wall time on an idle one).

    /usr/bin/python3 bench/cli_processes.py build/bfhpo [--trials 100] [--rounds 15]
    PYTHONPATH=/work/ref/optuna5 /usr/bin/python3 bench/cli_processes.py build/bfhpo   # Optuna 5
"""
import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SPACE = {
    "lr": {"type": "float", "low": 1e-4, "high": 1e-1, "log": True},
    "depth": {"type": "int", "low": 2, "high": 8},
    "width": {"type": "int", "low": 16, "high": 256, "log": True},
    "kind": {"type": "categorical", "choices": ["a", "b", "c"]},
}

OPTUNA_PRELUDE = """
import sys, warnings, optuna
warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)
try:
    from optuna.storages.journal import JournalFileBackend as Backend
except ImportError:
    from optuna.storages import JournalFileStorage as Backend
storage = optuna.storages.JournalStorage(Backend(sys.argv[1]))
sampler = optuna.samplers.TPESampler(multivariate=True, group=True, constant_liar=True, seed=int(sys.argv[2]))
study = optuna.load_study(study_name="bench", storage=storage, sampler=sampler)
"""
OPTUNA_ASK = OPTUNA_PRELUDE + """
t = study.ask()
p = {"lr": t.suggest_float("lr", 1e-4, 1e-1, log=True), "depth": t.suggest_int("depth", 2, 8),
     "width": t.suggest_int("width", 16, 256, log=True), "kind": t.suggest_categorical("kind", ["a", "b", "c"])}
print({"trial": t.number, "params": p})
"""
OPTUNA_TELL = OPTUNA_PRELUDE + """
running = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.RUNNING]
study.tell(running[-1].number, float(sys.argv[3]))
"""
OPTUNA_STATUS = OPTUNA_PRELUDE + """
trials = study.get_trials(deepcopy=False)
counts = {}
for t in trials:
    counts[t.state.name] = counts.get(t.state.name, 0) + 1
print(counts, study.best_trial.number, study.best_value)
for t in trials:
    print(t.number, t.state.name, t.value, t.params)
"""


def objective(p):
    return (math.log10(p["lr"]) + 2.5) ** 2 + (p["depth"] - 5) ** 2 / 10 + abs(math.log2(p["width"]) - 6) / 4 + (
        0.0 if p["kind"] == "b" else 0.3)


def run(cmd):
    """(wall seconds, CPU seconds (user + system), stdout) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime), out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bfhpo")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    bfhpo = os.path.abspath(args.bfhpo)
    work = tempfile.mkdtemp()
    try:
        study = os.path.join(work, "bench.json")
        with open(study, "w") as f:
            json.dump({"name": "bench", "direction": "minimize", "n_trials": 100000, "seed": 1,
                       "sampler": {"type": "tpe"}, "search_space": SPACE}, f)
        for _ in range(args.trials):
            asked = json.loads(subprocess.run([bfhpo, "ask", study], check=True, capture_output=True, text=True).stdout)
            subprocess.run([bfhpo, "tell", study, "--trial", str(asked["trial"]), "--value",
                            repr(objective(asked["params"]))], check=True, capture_output=True)
        optuna_journal = os.path.join(work, "optuna.journal")
        shutil.copy(study + ".journal", optuna_journal)
        py = [sys.executable, "-c"]
        times = {k: [] for k in ("ask", "tell", "status")}
        peer = {k: [] for k in ("ask", "tell", "status")}
        load_before = os.getloadavg()[0]
        for r in range(args.rounds):
            t, out = run([bfhpo, "ask", study])
            times["ask"].append(t)
            asked = json.loads(out)
            peer["ask"].append(run(py + [OPTUNA_ASK, optuna_journal, str(r)])[0])
            value = repr(objective(asked["params"]))
            times["tell"].append(run([bfhpo, "tell", study, "--trial", str(asked["trial"]), "--value", value])[0])
            peer["tell"].append(run(py + [OPTUNA_TELL, optuna_journal, str(r), value])[0])
            times["status"].append(run([bfhpo, "status", study])[0])
            peer["status"].append(run(py + [OPTUNA_STATUS, optuna_journal, str(r)])[0])
        optuna_version = subprocess.run(py + ["import optuna; print(optuna.__version__)"], capture_output=True,
                                        text=True).stdout.strip()
        print(f"{args.trials} finished trials, {args.rounds} interleaved rounds, Optuna {optuna_version}, "
              f"load {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'verb':<8}{'bfhpo wall ms':>14}{'optuna wall ms':>15}{'ratio':>7}"
              f"{'bfhpo cpu ms':>14}{'optuna cpu ms':>15}{'ratio':>7}")
        for k in times:
            row = f"{k:<8}"
            for i in (0, 1):
                b = statistics.median(t[i] for t in times[k]) * 1e3
                o = statistics.median(t[i] for t in peer[k]) * 1e3
                row += f"{b:>14.1f}{o:>15.1f}{o / max(b, 1e-9):>7.1f}"
            print(row)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
