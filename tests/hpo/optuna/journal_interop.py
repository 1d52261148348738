"""Optuna <-> bfhpo journal interop. Usage: journal_interop.py FIXTURE_EXE WORKDIR"""
import math
import os
import subprocess
import sys

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def storage(path):
    return optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(path))


def bfhpo_writes(fixture, work):
    path = os.path.join(work, "bfhpo_written.log")
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([fixture, "write", path], check=True)
    study = optuna.load_study(study_name="bfhpo", storage=storage(path))
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == 4, trials
    S = optuna.trial.TrialState
    assert [t.state for t in trials] == [S.COMPLETE, S.PRUNED, S.FAIL, S.COMPLETE]
    assert [t.number for t in trials] == [0, 1, 2, 3]
    for i, t in enumerate(trials):
        assert math.isclose(t.params["x"], -0.5 + 0.25 * i), t.params
        assert math.isclose(t.params["lr"], 1e-3 * (i + 1))
        assert t.params["step"] == 0.25 * i
        assert t.params["n"] == 1 + 2 * i and isinstance(t.params["n"], int)
        assert t.params["opt"] == ["adam", "sgd", None][i % 3]
        assert isinstance(t.distributions["lr"], optuna.distributions.FloatDistribution)
        assert t.distributions["lr"].log
        assert t.distributions["step"].step == 0.25
        assert t.distributions["n"].step == 2
        assert t.intermediate_values == {0: 10.0 - i, 1: 5.0 - i}
        assert t.user_attrs == {"i": i}
        assert t.system_attrs["bfhpo:memory"] == {"mb": 100 * i}
        assert t.datetime_start is not None
        assert t.datetime_complete is not None
    assert trials[0].value == 0.25 and trials[3].value == 0.0625
    assert study.best_trial.number == 3
    assert study.user_attrs == {"owner": "bfhpo"}


def optuna_writes(fixture, work):
    path = os.path.join(work, "optuna_written.log")
    if os.path.exists(path):
        os.remove(path)
    study = optuna.create_study(study_name="optuna", storage=storage(path))

    def objective(trial):
        x = trial.suggest_float("x", -2, 2)
        trial.suggest_int("k", 0, 4)
        trial.suggest_categorical("c", ["a", "b"])
        trial.report(x, 0)
        return x * x

    study.optimize(objective, n_trials=5)
    best = study.best_value
    out = subprocess.run([fixture, "extend", path], check=True, capture_output=True, text=True)
    assert float(out.stdout.split()[1]) == best, (out.stdout, best)
    again = optuna.load_study(study_name="optuna", storage=storage(path))
    trials = again.get_trials()
    assert len(trials) == 6
    assert trials[5].state == optuna.trial.TrialState.COMPLETE
    assert trials[5].value == -1.0 and trials[5].params == {"x": 0.0}
    assert again.best_trial.number == 5


if __name__ == "__main__":
    fixture, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    bfhpo_writes(fixture, work)
    optuna_writes(fixture, work)
    print("ok")
