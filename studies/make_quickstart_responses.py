#!/usr/bin/env python3
"""Writes studies/quickstart-responses.csv (the response file the quickstart
applies its model to) and studies/quickstart-responses.truth.csv (the item
parameters that generated it): 150 persons x 15 items of the quickstart's 2PL
with its default priors (log a ~ N(0, 0.5), b ~ N(0, 1), theta ~ N(0, 1)),
seed 2026. The files are in the repository; this script says how they were made."""
import csv
import math
import random
from pathlib import Path

N_PERSONS, N_ITEMS, SEED = 150, 15, 2026
here = Path(__file__).resolve().parent
rng = random.Random(SEED)
log_a = [rng.gauss(0.0, 0.5) for _ in range(N_ITEMS)]
b = [rng.gauss(0.0, 1.0) for _ in range(N_ITEMS)]
items = [f"Q{j + 1}" for j in range(N_ITEMS)]

with open(here / "quickstart-responses.csv", "w", newline="") as out:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id"] + items)
    for person in range(N_PERSONS):
        theta = rng.gauss(0.0, 1.0)
        row = [1 if rng.random() < 1.0 / (1.0 + math.exp(-math.exp(la) * (theta - bj))) else 0
               for la, bj in zip(log_a, b)]
        writer.writerow([f"p{person + 1:03d}"] + row)

with open(here / "quickstart-responses.truth.csv", "w", newline="") as out:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["item", "log_a", "b"])
    for name, la, bj in zip(items, log_a, b):
        writer.writerow([name, f"{la:.4f}", f"{bj:.4f}"])
