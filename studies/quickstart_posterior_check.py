#!/usr/bin/env python3
"""The quickstart's last look: how the posterior `bfhpo infer` gave for
studies/quickstart-responses.csv compares with the item parameters that
generated the file (studies/quickstart-responses.truth.csv).
Usage: quickstart_posterior_check.py POSTERIOR.csv TRUTH.csv"""
import csv
import statistics
import sys

posterior_file, truth_file = sys.argv[1:3]
truth = {row["item"]: row for row in csv.DictReader(open(truth_file))}
posterior = {(row["item"], row["parameter"]): row for row in csv.DictReader(open(posterior_file))}
for parameter in ("log_a", "b"):
    items = sorted(truth, key=lambda item: int(item[1:]))
    true = [float(truth[item][parameter]) for item in items]
    mean = [float(posterior[item, parameter]["mean"]) for item in items]
    covered = sum(float(posterior[item, parameter]["q2.5"]) <= value <= float(posterior[item, parameter]["q97.5"])
                  for item, value in zip(items, true))
    print(f"{parameter:>5}: posterior means vs the true values r = {statistics.correlation(mean, true):.2f}; "
          f"the true value inside the 95% interval for {covered} of {len(items)} items")
