#!/usr/bin/env python3
"""bfhpo's amortized posterior against Stan's on the same data (issue 29):

    python3 bench/compare_with_stan.py BFHPO.csv STAN.csv [--infer-seconds S] [--per-item]

BFHPO.csv: `bfhpo infer MODEL --data RESPONSES.csv --format csv --out BFHPO.csv`;
STAN.csv: `Rscript bench/stan_reference.R RESPONSES.csv MODEL STAN.csv`.
Per parameter group (log_a; b, or the thresholds b1..b(K-1) together), over
the items: the median |mean difference| in units of Stan's posterior sd, the
median sd ratio (bfhpo / Stan), the share of items whose Stan mean lies in
bfhpo's 95% interval, and the correlation of the means; then whether the
issue's targets hold (median |difference| <= 0.25 Stan sd, median sd ratio
in [0.85, 1.15], r >= 0.98 for difficulties and thresholds, >= 0.95 for
log a). Exit status 1 when a target is missed. --per-item first prints each
item's log a: both means and sds and z = (bfhpo - Stan) / Stan sd."""
import argparse
import csv
import statistics


def read(path):
    return {(row["item"], row["parameter"]): row for row in csv.DictReader(open(path))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bfhpo")
    parser.add_argument("stan")
    parser.add_argument("--infer-seconds", type=float, help="bfhpo infer's wall time, printed beside Stan's")
    parser.add_argument("--per-item", action="store_true", help="each item's log a first")
    args = parser.parse_args()
    bfhpo, stan = read(args.bfhpo), read(args.stan)
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
    stan_seconds = float(next(iter(stan.values()))["seconds"])
    line = f"Stan sampling {stan_seconds:.1f} s"
    if args.infer_seconds:
        line += f"; bfhpo infer {args.infer_seconds:.2f} s (x{stan_seconds / args.infer_seconds:.0f})"
    print(line)
    print("targets met" if met else "targets missed")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
