#!/usr/bin/env python3
"""bfhpo's amortized posterior against Stan's on the same data (issue 29):

    python3 bench/compare_with_stan.py BFHPO.csv STAN.csv [--infer-seconds S] [--per-item]
        [--laplace LAPLACE.csv] [--persons BFHPO_PERSONS.csv STAN_PERSONS.csv]
        [--laplace-persons LAPLACE_PERSONS.csv] [--dataset NAME]

BFHPO.csv: `bfhpo infer MODEL --data RESPONSES.csv --format csv --out BFHPO.csv`;
STAN.csv: `Rscript bench/stan_reference.R RESPONSES.csv MODEL STAN.csv`.
Per parameter group (log_a; b, or the thresholds b1..b(K-1) together), over
the items: the median |mean difference| in units of Stan's posterior sd, the
median sd ratio (bfhpo / Stan), the share of items whose Stan mean lies in
bfhpo's 95% interval, and the correlation of the means; then whether the
issue's targets hold (median |difference| <= 0.25 Stan sd, median sd ratio
in [0.85, 1.15], r >= 0.98 for difficulties and thresholds, >= 0.95 for
log a). Exit status 1 when a target is missed. --per-item first prints each
item's log a: both means and sds and z = (bfhpo - Stan) / Stan sd.

Issue 40: --laplace adds bench/laplace_reference.R's answer (the Laplace
approximation at the marginal posterior's mode) and prints, per parameter
group, bfhpo vs Stan and Laplace vs Stan side by side: |mean difference| in
Stan sd (median, max) and the sd ratio (median, min-max). --persons
compares `bfhpo infer --persons-out` with `stan_reference.R --persons-out`
(matched by the person column when both have the same ids, else by row):
r(means), |mean difference| in Stan sd (median, max), sd ratio (median,
min-max), and issue 40 part 3's targets (r >= 0.99, median |difference|
<= 0.1 Stan sd, median sd ratio in [0.9, 1.1]), which then count in the
exit status; --laplace-persons adds Laplace's (`laplace_reference.R`'s
PERSONS.csv: EAP and sd given the mode). --dataset NAME keeps only the rows
of bfhpo's long outputs (many data sets in one call) whose `dataset` is NAME."""
import argparse
import csv
import statistics


def read(path, dataset=None):
    rows = [row for row in csv.DictReader(open(path))
            if dataset is None or "dataset" not in row or row["dataset"] == dataset]
    if not rows:
        raise SystemExit(f"{path}: no rows" + (f" of data set {dataset}" if dataset else ""))
    return {(row["item"], row["parameter"]): row for row in rows}


def read_persons(path, dataset=None):
    rows = [row for row in csv.DictReader(open(path))
            if dataset is None or "dataset" not in row or row["dataset"] == dataset]
    if not rows:
        raise SystemExit(f"{path}: no persons" + (f" of data set {dataset}" if dataset else ""))
    return rows


def spread(values):
    """median, max, and min of a list"""
    return statistics.median(values), max(values), min(values)


def agreement(ours, stan, keys):
    """|mean difference| in Stan sd and sd ratio of each key: two lists"""
    diffs, ratios = [], []
    for key in keys:
        o, s = ours[key], stan[key]
        diffs.append(abs(float(o["mean"]) - float(s["mean"])) / float(s["sd"]))
        ratios.append(float(o["sd"]) / float(s["sd"]))
    return diffs, ratios


def print_side_by_side(groups, stan, answers):
    """per group, each answer against Stan: |diff| median / max, sd ratio median (min-max)"""
    print(f"{'group':<6} {'vs Stan':<8} {'|diff| med':>10} {'|diff| max':>10} {'sd ratio med':>12} {'sd ratio range':>15}")
    for group, keys in groups.items():
        for name, ours in answers:
            missing = [key for key in keys if key not in ours]
            if missing:
                raise SystemExit(f"{name}: no {missing[0][1]} for item {missing[0][0]}")
            diffs, ratios = agreement(ours, stan, keys)
            d_med, d_max, _ = spread(diffs)
            r_med, r_max, r_min = spread(ratios)
            print(f"{group:<6} {name:<8} {d_med:>10.3f} {d_max:>10.3f} {r_med:>12.3f} {r_min:>7.3f}-{r_max:<7.3f}")


def person_agreement(ours, stan):
    """r(means), |mean difference| in Stan sd, sd ratios of persons matched by id or row"""
    if len(ours) != len(stan):
        raise SystemExit(f"persons: {len(ours)} against Stan's {len(stan)}: the same data set?")
    ids_o, ids_s = [row["person"] for row in ours], [row["person"] for row in stan]
    if len(set(ids_s)) == len(ids_s) and set(ids_o) == set(ids_s):
        by_id = {row["person"]: row for row in ours}
        ours = [by_id[i] for i in ids_s]
    means_o = [float(row["theta_mean"]) for row in ours]
    means_s = [float(row["theta_mean"]) for row in stan]
    sds_o = [float(row["theta_sd"]) for row in ours]
    sds_s = [float(row["theta_sd"]) for row in stan]
    r = statistics.correlation(means_o, means_s)
    diffs = [abs(o - s) / sd for o, s, sd in zip(means_o, means_s, sds_s)]
    ratios = [o / s for o, s in zip(sds_o, sds_s)]
    return r, diffs, ratios


def print_persons(stan, answers):
    """per answer: r(means), |diff| median / max, sd ratio median (min-max); whether bfhpo meets part 3's targets"""
    met = True
    print(f"{'persons':<16} {'n':>5} {'r(means)':>8} {'|diff| med':>10} {'|diff| max':>10} {'sd ratio med':>12} {'sd ratio range':>15}")
    for name, ours in answers:
        r, diffs, ratios = person_agreement(ours, stan)
        d_med, d_max, _ = spread(diffs)
        r_med, r_max, r_min = spread(ratios)
        print(f"{name + ' vs Stan':<16} {len(diffs):>5} {r:>8.4f} {d_med:>10.3f} {d_max:>10.3f} {r_med:>12.3f} {r_min:>7.3f}-{r_max:<7.3f}")
        if name == "bfhpo":
            met = r >= 0.99 and d_med <= 0.1 and 0.9 <= r_med <= 1.1
            print(f"persons' targets (r >= 0.99, median |diff| <= 0.1, median sd ratio 0.9-1.1): {'met' if met else 'missed'}")
    return met


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bfhpo")
    parser.add_argument("stan")
    parser.add_argument("--infer-seconds", type=float, help="bfhpo infer's wall time, printed beside Stan's")
    parser.add_argument("--per-item", action="store_true", help="each item's log a first")
    parser.add_argument("--laplace", help="bench/laplace_reference.R's summary: Laplace vs Stan beside bfhpo vs Stan")
    parser.add_argument("--persons", nargs=2, metavar=("BFHPO_PERSONS", "STAN_PERSONS"),
                        help="infer --persons-out and stan_reference.R --persons-out: the persons' agreement")
    parser.add_argument("--laplace-persons", help="laplace_reference.R's PERSONS.csv, with --persons")
    parser.add_argument("--dataset", help="only this data set's rows of bfhpo's long outputs")
    args = parser.parse_args()
    bfhpo, stan = read(args.bfhpo, args.dataset), read(args.stan)
    if args.per_item:
        for (item, parameter), s in stan.items():
            if parameter != "log_a" or (item, parameter) not in bfhpo:
                continue
            b = bfhpo[(item, parameter)]
            z = (float(b["mean"]) - float(s["mean"])) / float(s["sd"])
            print(f"{item:<12} log_a Stan {float(s['mean']):.3f} ({float(s['sd']):.3f})  "
                  f"bfhpo {float(b['mean']):.3f} ({float(b['sd']):.3f})  z {z:+.2f}")
    groups = {}
    for (item, parameter) in stan:
        groups.setdefault("log_a" if parameter == "log_a" else "b", []).append((item, parameter))
    met = True
    print(f"{'group':<6} {'items':>5} {'|diff| (Stan sd)':>17} {'sd ratio':>9} {'Stan mean in 95%':>17} {'r(means)':>9}")
    for group, keys in groups.items():
        missing = [key for key in keys if key not in bfhpo]
        if missing:
            raise SystemExit(f"{args.bfhpo}: no {missing[0][1]} for item {missing[0][0]}: the same model and items?")
        diffs, ratios, inside, ours, theirs = [], [], 0, [], []
        for key in keys:
            b, s = bfhpo[key], stan[key]
            b_mean, s_mean, b_sd, s_sd = float(b["mean"]), float(s["mean"]), float(b["sd"]), float(s["sd"])
            diffs.append(abs(b_mean - s_mean) / s_sd)
            ratios.append(b_sd / s_sd)
            inside += float(b["q2.5"]) <= s_mean <= float(b["q97.5"])
            ours.append(b_mean)
            theirs.append(s_mean)
        r = statistics.correlation(ours, theirs)
        median_diff, median_ratio = statistics.median(diffs), statistics.median(ratios)
        print(f"{group:<6} {len(keys):>5} {median_diff:>17.3f} {median_ratio:>9.3f} {inside / len(keys):>17.2f} {r:>9.3f}")
        r_target = 0.95 if group == "log_a" else 0.98
        met &= median_diff <= 0.25 and 0.85 <= median_ratio <= 1.15 and r >= r_target
    answers = [("bfhpo", bfhpo)]
    if args.laplace:
        answers.append(("Laplace", read(args.laplace)))
        print_side_by_side(groups, stan, answers)
    if args.persons:
        person_answers = [("bfhpo", read_persons(args.persons[0], args.dataset))]
        if args.laplace_persons:
            person_answers.append(("Laplace", read_persons(args.laplace_persons)))
        met &= print_persons(read_persons(args.persons[1]), person_answers)
    stan_seconds = float(next(iter(stan.values()))["seconds"])
    line = f"Stan sampling {stan_seconds:.1f} s"
    if args.infer_seconds:
        line += f"; bfhpo infer {args.infer_seconds:.2f} s (x{stan_seconds / args.infer_seconds:.0f})"
    if args.laplace:
        line += f"; Laplace {float(next(iter(answers[1][1].values()))['seconds']):.2f} s"
    print(line)
    print("targets met" if met else "targets missed")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
