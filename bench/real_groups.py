#!/usr/bin/env python3
"""Real groups through one `bfhpo infer` call, each group against Stan and
the Laplace approximation (issue 40 parts 5 and 6):

    /usr/bin/python3 bench/real_groups.py BFHPO MODEL_DIR LONG.csv GROUP_COLUMN OUT_DIR
        [--refine importance] [--chains 4] [--iter 2000] [--no-stan]

LONG.csv: one response file whose GROUP_COLUMN names each person's group
(bench/real_data.R's bfi_neuroticism_by_education.csv, column education).
The script writes each group's persons (same ids, same order, the group
column left out) to OUT_DIR/GROUP.csv, runs one `BFHPO infer MODEL_DIR
--data LONG.csv --group-column GROUP_COLUMN` (per-item summary, persons and
the per-data-set table), and on each group bench/laplace_reference.R and
bench/stan_reference.R with the priors of MODEL_DIR/config.json and persons'
abilities (Stan's and Laplace's outputs are kept in OUT_DIR and reused by a
later run; --no-stan leaves Stan out; a Stan run that does not converge
is run once more with twice the iterations). MODEL_DIR "-" runs no bfhpo (Laplace
against Stan alone). Then per group: the persons, bfhpo vs Stan and Laplace
vs Stan per parameter group (median |mean difference| in Stan sd and median
sd ratio; log a, and b or the thresholds b1..b(K-1) together), the persons'
r(means), median |mean difference| in Stan sd and median sd ratio, and the
wall times side by side (infer's whole call once, with each data set's own
seconds from its table; Stan's sampling; Laplace's fit)."""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_stan as compare  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def split_groups(long_file, column, out_dir):
    """{group: path}: each group's persons in their own response file"""
    with open(long_file, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        if column not in header:
            sys.exit(f"{long_file}: no column {column}")
        at = header.index(column)
        rows = {}
        for row in reader:
            rows.setdefault(row[at], []).append(row[:at] + row[at + 1:])
    paths = {}
    for group, members in rows.items():
        paths[group] = os.path.join(out_dir, f"{group}.csv")
        with open(paths[group], "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header[:at] + header[at + 1:])
            writer.writerows(members)
    return paths


def prior_environment(simulator):
    """LOG_A_MEAN, LOG_A_SD, B_MEAN, B_SD as the estimator was trained"""
    env = dict(os.environ)
    priors = simulator.get("priors", {})
    log_a = priors.get("log_a", {})
    b = priors.get("b", priors.get("thresholds", {}))
    env.update(LOG_A_MEAN=str(log_a.get("mean", 0.0)), LOG_A_SD=str(log_a.get("sd", 0.5)),
               B_MEAN=str(b.get("mean", 0.0)), B_SD=str(b.get("sd", 1.0)))
    return env


def run_reference(script, data, model, out, persons, extra, env):
    """Rscript bench/SCRIPT unless OUT and PERSONS are there already"""
    if os.path.exists(out) and os.path.exists(persons):
        return
    command = ["nice", "-n", "10", "Rscript", os.path.join(HERE, script), data, model, out, *extra,
               "--persons-out", persons]
    print(" ".join(command), flush=True)
    subprocess.run(command, check=True, env=env)


def item_groups(stan):
    groups = {}
    for (item, parameter) in stan:
        groups.setdefault("log_a" if parameter == "log_a" else "b", []).append((item, parameter))
    return groups


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bfhpo")
    parser.add_argument("model_dir", help='a trained estimator, or "-" for none')
    parser.add_argument("long_file")
    parser.add_argument("group_column")
    parser.add_argument("out_dir")
    parser.add_argument("--model", help="2pl or grm (default: the estimator's; needed with MODEL_DIR -)")
    parser.add_argument("--refine", default="importance", help="infer's --refine")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--iter", type=int, default=2000)
    parser.add_argument("--no-stan", action="store_true")
    parser.add_argument("--priors-from", help="a config.json or study whose priors Stan and Laplace use "
                                               "(default: MODEL_DIR/config.json)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    config_path = args.priors_from or os.path.join(args.model_dir, "config.json")
    simulator = json.load(open(config_path))["simulator"] if os.path.exists(config_path) else {}
    model = args.model or simulator.get("model")
    if model not in ("2pl", "grm"):
        sys.exit("real_groups.py: --model 2pl or grm (the estimator's config.json names none)")
    env = prior_environment(simulator)
    groups = split_groups(args.long_file, args.group_column, args.out_dir)

    infer_wall, per_set = None, {}
    bfhpo_out = os.path.join(args.out_dir, "bfhpo.csv")
    bfhpo_persons = os.path.join(args.out_dir, "bfhpo_persons.csv")
    if args.model_dir != "-":
        datasets_out = os.path.join(args.out_dir, "bfhpo_datasets.csv")
        command = [args.bfhpo, "infer", args.model_dir, "--data", args.long_file, "--group-column",
                   args.group_column, "--out", bfhpo_out, "--persons-out", bfhpo_persons,
                   "--datasets-out", datasets_out, "--refine", args.refine]
        print(" ".join(command), flush=True)
        started = time.monotonic()
        done = subprocess.run(command)
        infer_wall = time.monotonic() - started
        if done.returncode not in (0, 2):
            sys.exit(f"bfhpo infer exited {done.returncode}")
        per_set = {row["dataset"]: row for row in csv.DictReader(open(datasets_out))}

    results = {}
    for group, path in sorted(groups.items()):
        laplace = os.path.join(args.out_dir, f"{group}.laplace.csv")
        laplace_persons = os.path.join(args.out_dir, f"{group}.laplace_persons.csv")
        run_reference("laplace_reference.R", path, model, laplace, laplace_persons, [], env)
        stan = os.path.join(args.out_dir, f"{group}.stan.csv")
        stan_persons = os.path.join(args.out_dir, f"{group}.stan_persons.csv")
        if not args.no_stan:
            try:
                run_reference("stan_reference.R", path, model, stan, stan_persons,
                              [str(args.chains), str(args.iter)], env)
            except subprocess.CalledProcessError:  # not converged (R-hat > 1.01 or ESS < 400): once more, twice as long
                for written in (stan, stan_persons):
                    if os.path.exists(written):
                        os.remove(written)
                run_reference("stan_reference.R", path, model, stan, stan_persons,
                              [str(args.chains), str(2 * args.iter)], env)
        results[group] = (path, laplace, laplace_persons, stan, stan_persons)

    print()
    if infer_wall is not None:
        print(f"one bfhpo infer call, {len(groups)} groups: {infer_wall:.1f} s wall (--refine {args.refine})")
    print(f"{'group':<8} {'persons':>7} {'answer':<8} {'log a |diff|':>12} {'ratio':>6} {'b |diff|':>9} {'ratio':>6}"
          f" {'theta r':>8} {'|diff|':>7} {'ratio':>6} {'seconds':>8} {'path':<10}")
    for group, (path, laplace, laplace_persons, stan, stan_persons) in results.items():
        persons = sum(1 for _ in open(path)) - 1
        if not os.path.exists(stan):
            print(f"{group:<8} {persons:>7} (no Stan reference)")
            continue
        reference = compare.read(stan)
        reference_persons = compare.read_persons(stan_persons)
        answers = [("Laplace", compare.read(laplace), compare.read_persons(laplace_persons),
                    float(next(iter(compare.read(laplace).values()))["seconds"]), "")]
        if group in per_set:
            answers.insert(0, ("bfhpo", compare.read(bfhpo_out, group), compare.read_persons(bfhpo_persons, group),
                               float(per_set[group]["seconds"]), per_set[group]["path"]))
        for name, items, persons_answer, seconds, path_taken in answers:
            cells = []
            for keys in item_groups(reference).values():
                diffs, ratios = compare.agreement(items, reference, keys)
                cells += [compare.statistics.median(diffs), compare.statistics.median(ratios)]
            r, diffs, ratios = compare.person_agreement(persons_answer, reference_persons)
            cells += [r, compare.statistics.median(diffs), compare.statistics.median(ratios)]
            print(f"{group:<8} {persons:>7} {name:<8} {cells[0]:>12.3f} {cells[1]:>6.3f} {cells[2]:>9.3f} {cells[3]:>6.3f}"
                  f" {cells[4]:>8.4f} {cells[5]:>7.3f} {cells[6]:>6.3f} {seconds:>8.2f} {path_taken:<10}")
        stan_seconds = float(next(iter(reference.values()))["seconds"])
        print(f"{group:<8} {persons:>7} {'Stan':<8} {'':>12} {'':>6} {'':>9} {'':>6} {'':>8} {'':>7} {'':>6}"
              f" {stan_seconds:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
