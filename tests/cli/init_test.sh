# `bfhpo init` on simulated response files: the study it writes covers the
# file (items, persons, categories, missing share), `train` runs it as it is
# (its length shortened here) and `infer` reads the same file with the model;
# a study without a search space trains and `optimize` refuses it; -o never
# replaces a file unless --force, and never the data or a symlink; a file
# that cannot serve the model exits 2 with the fix and writes nothing;
# --fine-tune starts from a shipped estimator (its network and weights).
source "$(dirname "$0")/lib.sh"

# responses FILE PERSONS ITEMS CATEGORIES MISSING_SHARE: a 2PL (2 categories)
# or GRM file with an id column; MISSING_SHARE of the cells empty.
responses() {
  "$OPTUNA_PYTHON" - "$@" <<'PY'
import sys
import numpy as np
path, persons, items, k, missing = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
rng = np.random.default_rng(5)
log_a, theta = rng.normal(0, 0.5, items), rng.normal(0, 1, persons)
b = np.sort(rng.normal(0, 1, (items, k - 1)), axis=1)
at_least = 1 / (1 + np.exp(-np.exp(log_a)[None, :, None] * (theta[:, None, None] - b[None])))
y = (rng.random((persons, items))[..., None] < at_least).sum(-1)
y[:k, :] = np.arange(k)[:, None]  # every item uses every category
hole = rng.random((persons, items)) < missing
hole[:k, :] = False
with open(path, "w") as f:
    f.write("id," + ",".join(f"q{j}" for j in range(items)) + "\n")
    for p in range(persons):
        f.write(f"p{p}," + ",".join("" if hole[p, j] else str(y[p, j]) for j in range(items)) + "\n")
PY
}

# A binary file with a tenth of its cells missing: init, then train and infer as a user would.
responses "$WORK/test.csv" 60 6 2 0.1
"$BFHPO" init --data "$WORK/test.csv" --model 2pl -o "$WORK/study.json" > "$WORK/init.out" 2> "$WORK/init.err" ||
  fail "init exited $?: $(cat "$WORK/init.err")"
for choice in "n_items [5, 7]" "n_persons [48, 72]" "missing [" "training " "CPU time" 'memory budget "auto"' \
  "search space"; do
  grep -qF "$choice" "$WORK/init.out" || fail "init does not say '$choice': $(cat "$WORK/init.out")"
done
"$OPTUNA_PYTHON" - "$WORK/study.json" "$WORK/test.csv" <<'PY' || fail "the study does not fit the file"
import csv, json, sys
study = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))[1:]
cells = [c for r in rows for c in r[1:]]
share = sum(c == "" for c in cells) / len(cells)
sim = study["simulator"]
assert sim["model"] == "2pl" and "n_categories" not in sim, sim
assert sim["n_items"][0] < 6 < sim["n_items"][1] and sim["n_persons"][0] < 60 < sim["n_persons"][1], sim
assert sim["missing"][0] <= share <= sim["missing"][1], (share, sim["missing"])
assert study["memory"]["budget_mb"] == "auto" and study["search_space"], study
assert study["training"]["epochs"] * study["training"]["num_batches"] >= 1000, study["training"]
PY

# The same study, trained a few steps of a small network (the length and width are the test's, not init's).
"$OPTUNA_PYTHON" - "$WORK/study.json" "$WORK/short.json" <<'PY'
import json, sys
study = json.load(open(sys.argv[1]))
study["training"].update({"epochs": 1, "num_batches": 3, "batch_size": 4, "validation_sims": 4, "device": "cpu"})
study["approximator"] = {"summary": {"cell_mlp_width": 16, "embed_dim": 16, "attention_layers": 1},
                         "flow": {"depth": 2, "subnet_width": 16}}
del study["search_space"]  # one configuration: no search space needed
json.dump(study, open(sys.argv[2], "w"), indent=1)
PY
"$BFHPO" train "$WORK/short.json" --out "$WORK/model" > "$WORK/train.out" 2>&1 ||
  fail "train of the init study exited $?: $(tail -5 "$WORK/train.out")"
"$BFHPO" infer "$WORK/model" --data "$WORK/test.csv" --draws 50 --out "$WORK/posterior.csv" 2> "$WORK/infer.err" ||
  fail "infer on the init file exited $?: $(cat "$WORK/infer.err")"
[ "$(grep -c '^q' "$WORK/posterior.csv")" -ge 6 ] || fail "infer gave no row per item: $(cat "$WORK/posterior.csv")"
expect_user_error "field 'search_space': missing or empty; \`bfhpo optimize\`" "$BFHPO" optimize "$WORK/short.json"
grep -qF "bfhpo train $WORK/short.json" "$WORK/err" || fail "optimize's fix does not offer train: $(cat "$WORK/err")"
[ ! -e "$WORK/short.json.journal" ] || fail "optimize without a search space wrote a journal"

# --fine-tune: that trained model, shipped (BFHPO_ESTIMATORS), is the network and the weights the study starts
# from, a quarter of the epochs, the learning rate searched alone; train runs it from those weights.
mkdir -p "$WORK/shipped" && cp -r "$WORK/model" "$WORK/shipped/2pl-tiny"
"$BFHPO" init --data "$WORK/test.csv" --model 2pl -o "$WORK/fresh.json" > /dev/null 2>&1 || fail "init (fresh) failed"
BFHPO_ESTIMATORS="$WORK/shipped" "$BFHPO" init --data "$WORK/test.csv" --model 2pl --fine-tune \
  -o "$WORK/tune.json" > "$WORK/tune.out" 2> "$WORK/tune.err" || fail "init --fine-tune exited $?: $(cat "$WORK/tune.err")"
grep -qF "fine-tuning: training starts from the shipped 2pl-tiny estimator" "$WORK/tune.out" ||
  fail "init --fine-tune does not say what it starts from: $(cat "$WORK/tune.out")"
# Its network is the shipped one's: init states no choice of its own about the network.
! grep -qF "summary.item_fit" "$WORK/tune.out" || fail "init --fine-tune states the network's item fit: $(cat "$WORK/tune.out")"
"$OPTUNA_PYTHON" - "$WORK/tune.json" "$WORK/fresh.json" "$WORK/shipped/2pl-tiny" <<'PY' || fail "the fine-tuning study"
import json, os, sys
tune, fresh, shipped = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
network = json.load(open(os.path.join(shipped, "config.json")))["approximator"]
for decided_elsewhere in ("memory", "param_dim", "n_categories"):
    network.pop(decided_elsewhere)
assert tune["approximator"] == network, (tune["approximator"], network)
assert tune["training"]["initial_weights"] == os.path.join(os.path.realpath(shipped), "weights.pt"), tune["training"]
assert tune["training"]["epochs"] == -(-fresh["training"]["epochs"] // 4), (tune["training"], fresh["training"])
assert list(tune["search_space"]) == ["training.learning_rate"], tune["search_space"]
assert tune["simulator"] == fresh["simulator"], (tune["simulator"], fresh["simulator"])
PY
"$OPTUNA_PYTHON" - "$WORK/tune.json" <<'PY'
import json, sys
study = json.load(open(sys.argv[1]))
study["training"].update({"epochs": 1, "num_batches": 2, "batch_size": 4, "validation_sims": 4, "device": "cpu"})
json.dump(study, open(sys.argv[1], "w"), indent=1)
PY
"$BFHPO" train "$WORK/tune.json" --out "$WORK/tuned" > "$WORK/tune_train.out" 2>&1 ||
  fail "train from the shipped weights exited $?: $(tail -5 "$WORK/tune_train.out")"
grep -qF '"initial_weights"' "$WORK/tuned/config.json" || fail "the trained config does not say where it started"

# Graded responses: K from the file; without -o the study goes to stdout, the choices to stderr.
responses "$WORK/scale.csv" 120 5 6 0
"$BFHPO" init --data "$WORK/scale.csv" --model grm > "$WORK/grm.json" 2> "$WORK/grm.err" ||
  fail "init grm exited $?: $(cat "$WORK/grm.err")"
grep -qF "n_categories 6" "$WORK/grm.err" && grep -qF "missing 0" "$WORK/grm.err" ||
  fail "init grm does not state K and the missing share: $(cat "$WORK/grm.err")"
"$OPTUNA_PYTHON" -c '
import json, sys
sim = json.load(open(sys.argv[1]))["simulator"]
assert sim["n_categories"] == 6 and "missing" not in sim, sim' "$WORK/grm.json" || fail "grm study: $(cat "$WORK/grm.json")"
expect_user_error "no estimator of the grm model with 6 categories ships" \
  env BFHPO_ESTIMATORS="$WORK/shipped" "$BFHPO" init --data "$WORK/scale.csv" --model grm --fine-tune

# -o: an existing file stays unless --force; never the data file or a symlink.
printf 'mine\n' > "$WORK/taken.json"
expect_user_error "taken.json exists" "$BFHPO" init --data "$WORK/test.csv" --model 2pl -o "$WORK/taken.json"
[ "$(cat "$WORK/taken.json")" = mine ] || fail "init replaced an existing file without --force"
"$BFHPO" init --data "$WORK/test.csv" --model 2pl -o "$WORK/taken.json" --force > /dev/null ||
  fail "init --force did not replace the file"
grep -qF '"model": "2pl"' "$WORK/taken.json" || fail "init --force wrote no study"
cp "$WORK/test.csv" "$WORK/kept.csv"
expect_user_error "is the data file" "$BFHPO" init --data "$WORK/test.csv" --model 2pl -o "$WORK/test.csv" --force
cmp -s "$WORK/test.csv" "$WORK/kept.csv" || fail "init replaced its data file"
ln -s "$WORK/kept.csv" "$WORK/link.json"
expect_user_error "a symbolic link" "$BFHPO" init --data "$WORK/test.csv" --model 2pl -o "$WORK/link.json" --force
[ -L "$WORK/link.json" ] && cmp -s "$WORK/test.csv" "$WORK/kept.csv" || fail "init replaced a symlink or its target"

# Files that cannot serve: exit 2, the file and the fix, no study written.
bad() {  # bad NAME MODEL NEEDLE CSV_TEXT
  printf '%b' "$4" > "$WORK/$1.csv"
  expect_user_error "$3" "$BFHPO" init --data "$WORK/$1.csv" --model "$2" -o "$WORK/$1.json"
  grep -qF "$WORK/$1.csv" "$WORK/err" || fail "$1: the message does not name the file: $(cat "$WORK/err")"
  [ ! -e "$WORK/$1.json" ] || fail "$1: a study was written"
}
bad one_item 2pl "one item ('q1')" 'q1\n0\n1\n1\n'
bad constant 2pl "item 'q2': every one of its 3 responses is 1" 'q1,q2,q3\n0,1,1\n1,1,0\n1,1,0\n'
bad gaps grm "the responses are 0,1,3" 'q1,q2,q3\n0,1,3\n1,3,0\n3,0,1\n'
grep -qF "2 never occurs" "$WORK/err" || fail "gaps: the missing category is not named: $(cat "$WORK/err")"
bad from_one grm "subtract 1 from every response" 'q1,q2\n1,2\n2,3\n3,1\n'
bad few_persons 2pl "2 persons for 3 items" 'q1,q2,q3\n0,1,1\n1,0,0\n'
bad grm_binary grm "binary responses (0/1) for the graded model" 'q1,q2\n0,1\n1,0\n1,1\n'
bad binary_graded 3pl "graded responses (0..2) for the binary model 3pl" 'q1,q2\n0,1\n2,0\n1,2\n'
expect_user_error "--model 'irt' is unknown" "$BFHPO" init --data "$WORK/test.csv" --model irt
expect_user_error "the option '--model' is required" "$BFHPO" init --data "$WORK/test.csv"
echo "init: studies sized to the files, trained and inferred; bad files refused"
