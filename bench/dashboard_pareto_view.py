"""What optuna-dashboard shows of a bfhpo study of several objectives (issue 27, part 5).

Serves the study through optuna-dashboard's own WSGI application (its Python
API, run from its source) and checks, against `bfhpo status --json` of the same
storage, what its Pareto-front view draws:

- the study's directions and the axis names (`objective_names`, which the
  dashboard reads from Optuna's `study:metric_names` system attribute);
- every trial's state, values and constraints as the API serves them;
- the view's "Best Trial" markers: the view (GraphParetoFront.tsx) keeps the
  trials whose every constraint is <= 0, normalises maximised objectives to
  minimised ones and draws the non-dominated ones as best. That set, computed
  here from the API's answer by the same rule, must be bfhpo's front;
- the API's own `best_trials` (the non-dominated COMPLETE trials, constraints
  not applied): bfhpo's front when the study has no constraints.

optuna-dashboard needs Optuna >= 3.6 and bottle >= 0.13, which Debian 12 does
not have, so this is a bench check, not a test (the tests check the storage
through Optuna 3.1). Run it with Debian's Python and the fetched sources:

    git -C <optuna mirror> archive HEAD | tar -x -C /tmp/optuna5
    git -C <optuna-dashboard mirror> archive HEAD | tar -x -C /tmp/dashboard
    git -C <bottle mirror> show HEAD:bottle.py > /tmp/bottle/bottle.py
    PYTHONPATH=/tmp/optuna5:/tmp/dashboard:/tmp/bottle /usr/bin/python3 \\
        bench/dashboard_pareto_view.py STUDY.json [--bfhpo build/bfhpo]

A journal study only (the storage a study file names with "storage", else
STUDY.json.journal). Exit 0 when every check holds, 1 naming the first that
does not.
"""

import argparse
import io
import json
import subprocess
import sys
import wsgiref.util


def bfhpo_view(bfhpo, study_file):
    return json.loads(subprocess.check_output([bfhpo, "status", study_file, "--json"]))


def journal_path(study_file):
    with open(study_file) as f:
        storage = json.load(f).get("storage")
    if storage is None:
        return study_file + ".journal"
    if "://" in storage:
        sys.exit(f"{study_file}: storage {storage!r} is not a journal file; this check reads journals only")
    return storage


def api_get(app, path):
    environ = {}
    wsgiref.util.setup_testing_defaults(environ)
    environ.update({"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "", "wsgi.input": io.BytesIO()})
    status = []
    body = b"".join(app(environ, lambda s, headers, exc_info=None: status.append(s)))
    if not status or not status[0].startswith("200"):
        sys.exit(f"optuna-dashboard GET {path}: {status[0] if status else 'no status'}: {body[:300]!r}")
    return json.loads(body)


def view_best_trials(study_detail):
    """The trials GraphParetoFront.tsx draws as "Best Trial": feasible, then not dominated."""
    signs = [1.0 if d == "minimize" else -1.0 for d in study_detail["directions"]]
    complete = [t for t in study_detail["trials"] if t["state"] == "Complete" and t.get("values")]
    feasible = [t for t in complete if all(c <= 0 for c in t.get("constraints", []))]
    losses = {t["number"]: [s * v for s, v in zip(signs, t["values"])] for t in feasible}

    def dominates(a, b):
        return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))

    return sorted(n for n, loss in losses.items() if not any(dominates(other, loss) for other in losses.values()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study_file")
    parser.add_argument("--bfhpo", default="build/bfhpo")
    args = parser.parse_args()

    import optuna
    import optuna_dashboard
    from optuna.storages.journal import JournalFileBackend

    ours = bfhpo_view(args.bfhpo, args.study_file)
    storage = optuna.storages.JournalStorage(JournalFileBackend(journal_path(args.study_file)))
    app = optuna_dashboard.wsgi(storage)

    studies = api_get(app, "/api/studies")["study_summaries"]
    matching = [s for s in studies if s["study_name"] == ours["study"]]
    if not matching:
        sys.exit(f"optuna-dashboard lists no study {ours['study']!r} (it lists {[s['study_name'] for s in studies]})")
    detail = api_get(app, f"/api/studies/{matching[0]['study_id']}")

    failures = []

    def check(what, dashboard, bfhpo):
        line = f"{what}: dashboard {dashboard}, bfhpo {bfhpo}"
        print(("ok    " if dashboard == bfhpo else "WRONG ") + line)
        if dashboard != bfhpo:
            failures.append(line)

    objectives = ours.get("objectives")
    if not objectives or len(objectives) < 2:
        sys.exit(f"{args.study_file}: a study of one objective; the Pareto-front view needs two or more")
    check("directions", detail["directions"], [o["direction"] for o in objectives])
    check("axis names (objective_names)", detail.get("objective_names"), [o["metric"] for o in objectives])

    served = {t["number"]: t for t in detail["trials"]}
    check("trial numbers", sorted(served), sorted(t["number"] for t in ours["trials"]))
    mismatched = []
    for trial in ours["trials"]:
        theirs = served.get(trial["number"])
        if theirs is None:
            continue
        constraints = trial["system_attrs"].get("constraints", [])
        if (theirs["state"].upper() != trial["state"] or (theirs.get("values") or None) != trial["values"]
                or theirs.get("constraints", []) != constraints):
            mismatched.append(trial["number"])
    check("trials whose state, values or constraints differ", mismatched, [])

    front = sorted(t["number"] for t in ours["best_trials"])
    check("the view's Best Trial markers (feasible, non-dominated)", view_best_trials(detail), front)
    constrained = any(t["system_attrs"].get("constraints") for t in ours["trials"])
    api_front = sorted(t["number"] for t in detail["best_trials"])
    if constrained:
        print(f"info  the API's best_trials (constraints not applied): {api_front}")
    else:
        check("the API's best_trials", api_front, front)

    complete = sum(1 for t in detail["trials"] if t["state"] == "Complete")
    infeasible = sum(1 for t in detail["trials"] if any(c > 0 for c in t.get("constraints", [])))
    print(f"study {ours['study']!r}: {len(detail['trials'])} trials, {complete} complete, {infeasible} infeasible, "
          f"front {front}")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
