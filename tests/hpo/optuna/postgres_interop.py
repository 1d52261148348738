#!/usr/bin/python3
"""bfhpo's PostgreSQL storage and Debian's Optuna 3.1 (python3-psycopg2) on one
database: Optuna reads every field bfhpo wrote, bfhpo reads every field Optuna
wrote, and bfhpo's schema is Optuna's, table for table.

usage: postgres_interop.py POSTGRES_FIXTURE   (BFHPO_TEST_POSTGRES_URL: a superuser URL)
Exit 77 (ctest: Skipped) without BFHPO_TEST_POSTGRES_URL.
"""
import json
import math
import os
import subprocess
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from postgres_scratch import admin_url, fresh_database  # noqa: E402

if not admin_url():
    print("Skipped: BFHPO_TEST_POSTGRES_URL is not set; run under scripts/with-postgres")
    sys.exit(77)

import optuna  # noqa: E402
import psycopg2  # noqa: E402

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)
fixture = sys.argv[1]
TS = optuna.trial.TrialState


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                             and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def bfhpo_dump(url, name):
    out = subprocess.run([fixture, "dump", url, name], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def schema_of(url):
    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute("""SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default,
                                 character_maximum_length, numeric_precision
                            FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2""")
        columns = cursor.fetchall()
        cursor.execute("""SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
                            FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2""")
        constraints = cursor.fetchall()
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1")
        indexes = cursor.fetchall()
        cursor.execute("""SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder)
                            FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY 1 ORDER BY 1""")
        enums = cursor.fetchall()
        cursor.execute("SELECT version_num FROM alembic_version")
        version = cursor.fetchone()[0]
    connection.close()
    return columns, constraints, indexes, enums, version


# --- bfhpo writes into a database Optuna 3.1 created; Optuna reads it with a plain URL.
url = fresh_database("bfhpo_writes")
optuna.storages.RDBStorage(url)  # Optuna 3.1 creates its schema (v3.0.0.d)
subprocess.run([fixture, "write", url], check=True)
study = optuna.load_study(study_name="bfhpo", storage=url)
trials = study.get_trials(deepcopy=False)
assert [t.number for t in trials] == list(range(6)), [t.number for t in trials]
assert [t.state for t in trials] == [TS.COMPLETE, TS.PRUNED, TS.FAIL, TS.COMPLETE, TS.RUNNING, TS.WAITING]
assert trials[0].value == 0.1 + 0.2  # exact: no digits lost on the way
assert trials[3].value == -math.inf
choices = ("adam", 3, None, True)
for i, t in enumerate(trials[:5]):
    expected = {"x": -0.5 + 0.25 * i, "lr": 1e-3 * (i + 1) / 3, "step": 0.25 * i, "n": 1 + 2 * i, "opt": choices[i % 4]}
    assert same(t.params, expected), (i, t.params, expected)
    assert isinstance(t.distributions["lr"], optuna.distributions.FloatDistribution) and t.distributions["lr"].log
    assert t.distributions["step"].step == 0.25 and t.distributions["n"].step == 2
    assert t.distributions["opt"].choices == choices
    expected_intermediate = {0: 10.0 - i, 1: math.nan if i == 1 else 5.0 - i, 2: math.inf if i == 2 else -math.inf}
    assert same(t.intermediate_values, expected_intermediate), (i, t.intermediate_values)
    assert same(t.user_attrs, {"i": i, "nested": {"list": [1, 2.5, "three"], "nan": math.nan}}), t.user_attrs
    assert t.system_attrs == {"bfhpo:memory": {"mb": 100 * i}, "bfhpo:worker": {"pid": i}}, t.system_attrs
    assert t.datetime_start is not None
    assert (t.datetime_complete is not None) == t.state.is_finished()
assert trials[5].params == {"x": 0.75} and trials[5].system_attrs == {"bfhpo:requeued_from": 2}
connection = psycopg2.connect(url)
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM trial_heartbeats")
    assert cursor.fetchone()[0] == 5  # Optuna's own heartbeat table, one row a trial that ran
connection.close()
# bfhpo reads back what it wrote, as Optuna does.
mine = bfhpo_dump(url, "bfhpo")
for t, m in zip(trials, mine):
    assert m["state"] == t.state.name and same(m["params"], t.params), (m, t)
    assert same(m["user_attrs"], t.user_attrs) and m["system_attrs"] == t.system_attrs
print("bfhpo -> Optuna 3.1: 6 trials, every field")

# --- Optuna 3.1 writes a study; bfhpo reads every field.
url = fresh_database("optuna_writes")
study = optuna.create_study(study_name="optuna", storage=url, direction="maximize")


def objective(trial):
    x = trial.suggest_float("x", -2, 2)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    n = trial.suggest_int("n", 2, 64, log=True)
    k = trial.suggest_int("k", 0, 10, step=5)
    kind = trial.suggest_categorical("kind", ["a", 1.5, None, False])
    trial.set_user_attr("tag", {"n": n, "kind": kind})
    for step in range(3):
        trial.report(x * step if step != 1 else math.nan, step)
    if trial.number == 3:
        raise optuna.TrialPruned()
    if trial.number == 4:
        raise RuntimeError("fails on purpose")
    return x * x + math.log(lr) + n + k


study.enqueue_trial({"x": 0.5})
study.optimize(objective, n_trials=6, catch=(RuntimeError,))
study.enqueue_trial({"x": 1.5})  # stays WAITING
theirs = study.get_trials(deepcopy=False)
mine = bfhpo_dump(url, "optuna")
assert len(mine) == len(theirs) == 7
for t, m in zip(theirs, mine):
    assert m["number"] == t.number and m["state"] == t.state.name, (m, t)
    assert same(m["value"], t.value), (m["value"], t.value)
    assert same(m["params"], t.params), (m["params"], t.params)
    assert same({int(k): v for k, v in m["intermediate"].items()}, t.intermediate_values), (m, t)
    assert same(m["user_attrs"], t.user_attrs) and same(m["system_attrs"], t.system_attrs), (m, t)
assert [m["state"] for m in mine].count("PRUNED") == 1 and [m["state"] for m in mine].count("FAIL") == 1
print("Optuna 3.1 -> bfhpo: 7 trials, every field")

# --- bfhpo creates Optuna >= 3.2's schema itself: Optuna 3.1's, plus one index, stamped v3.2.0.a.
made_by_bfhpo = fresh_database("bfhpo_schema")
subprocess.run([fixture, "write", made_by_bfhpo], check=True)
made_by_optuna = fresh_database("optuna_schema")
optuna.storages.RDBStorage(made_by_optuna)
b_columns, b_constraints, b_indexes, b_enums, b_version = schema_of(made_by_bfhpo)
o_columns, o_constraints, o_indexes, o_enums, o_version = schema_of(made_by_optuna)
assert (b_version, o_version) == ("v3.2.0.a", "v3.0.0.d")
assert b_columns == o_columns and b_constraints == o_constraints and b_enums == o_enums
assert [i for i in b_indexes if i not in o_indexes] == [
    ("ix_trials_study_id", "CREATE INDEX ix_trials_study_id ON public.trials USING btree (study_id)")]
assert all(i in b_indexes for i in o_indexes)
# Optuna 3.1 refuses a v3.2.0.a schema by default (as it does one Optuna 3.2 made) and reads it when told to.
try:
    optuna.load_study(study_name="bfhpo", storage=made_by_bfhpo)
    raise AssertionError("Optuna 3.1 opened a v3.2.0.a schema without skip_compatibility_check")
except RuntimeError as e:
    assert "compatible" in str(e), e
storage = optuna.storages.RDBStorage(made_by_bfhpo, skip_compatibility_check=True)
assert len(optuna.load_study(study_name="bfhpo", storage=storage).trials) == 6
print("schema: Optuna's columns, constraints and enums; v3.2.0.a adds ix_trials_study_id")
print("postgres interop: all checks passed")
