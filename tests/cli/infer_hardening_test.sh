# Issue 25 (items 5, 6, 10, 13, 17) and 39 (item 7) for `bfhpo infer`: an output never names
# an input or another output; weights that are empty, cut short, corrupt or not those of the
# config.json beside them, a huge --draws and a 100,000-item file are exit 2
# naming the file and the fix, never an abort; item names with commas and
# quotes come out as RFC 4180 CSV fields in the summary and the draws; a UTF-8
# byte order mark does not hide the id column; the usage names --id-column;
# a study without a COMPLETE trial says so.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 1 "\"storage\": \"$WORK/tiny.journal\""
"$BFHPO" train "$STUDY" --out "$WORK/model" > "$WORK/train.out" 2>&1 || fail "train: $(tail -3 "$WORK/train.out")"

# data FILE HEADER_PREFIX: 7 items x 50 persons of 0/1 under a header of `person,` + item names.
data() {
  "$OPTUNA_PYTHON" - "$@" <<'PY'
import sys
import numpy as np
path, header = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
with open(path, "wb") as f:
    f.write(header.encode() + b"\n")
    for p in range(50):
        f.write((f"p{p}," + ",".join(str(v) for v in rng.integers(0, 2, 7)) + "\n").encode())
PY
}
data "$WORK/data.csv" "person,i1,i2,i3,i4,i5,i6,i7"

# Item 5: an output naming an input (by another spelling, or through a link) is refused; the input stays.
cp "$WORK/data.csv" "$WORK/data.before"
ln -s "$WORK/data.csv" "$WORK/link.csv"
expect_user_error "--draws-out $WORK/data.csv names an input" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 20 --draws-out "$WORK/data.csv"
expect_user_error "--out $WORK/../$(basename "$WORK")/data.csv names an input" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 20 --out "$WORK/../$(basename "$WORK")/data.csv"
expect_user_error "--out $WORK/link.csv names an input" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 20 --out "$WORK/link.csv"
expect_user_error "names an input, $WORK/model/weights.pt" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 20 --out "$WORK/model/weights.pt"
expect_user_error "names an input, $WORK/model/result.json" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 20 --out "$WORK/model/result.json"
expect_user_error "--out and --draws-out name the same file" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 20 --out "$WORK/new.csv" --draws-out "$WORK/./new.csv"
# Issue 39 item 7: files not yet written, named relative, with ./ or absolute, are one file.
expect_user_error "--out and --draws-out name the same file" \
  env -C "$WORK" "$BFHPO" infer "$WORK/model" --data data.csv --draws 20 --out a.csv --draws-out ./a.csv
expect_user_error "--draws-out and --check-out name the same file" \
  env -C "$WORK" "$BFHPO" infer "$WORK/model" --data data.csv --draws 20 --draws-out c.csv --check-out "$WORK/c.csv"
expect_user_error "--out and --persons-out name the same file" \
  env -C "$WORK" "$BFHPO" infer "$WORK/model" --data data.csv --draws 20 --out p.csv --persons-out "$WORK/./p.csv"
[ ! -e "$WORK/a.csv" ] && [ ! -e "$WORK/c.csv" ] && [ ! -e "$WORK/p.csv" ] || fail "a refused infer wrote an output"
cmp -s "$WORK/data.csv" "$WORK/data.before" || fail "a refused infer changed the data file"
[ ! -e "$WORK/new.csv" ] || fail "a refused infer wrote its output"

# Item 6: weights LibTorch cannot read, or of another configuration: exit 2 naming the weights.
cp -r "$WORK/model" "$WORK/bad"
for kind in empty truncated corrupt; do
  case "$kind" in
    empty) : > "$WORK/bad/weights.pt" ;;
    truncated) head -c 2000 "$WORK/model/weights.pt" > "$WORK/bad/weights.pt" ;;
    corrupt) "$OPTUNA_PYTHON" -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2:] = bytes(len(b) - len(b) // 2); open(sys.argv[2], "wb").write(b)' \
               "$WORK/model/weights.pt" "$WORK/bad/weights.pt" ;;
  esac
  expect_user_error "$WORK/bad/weights.pt: not weights LibTorch can read" \
    "$BFHPO" infer "$WORK/bad" --data "$WORK/data.csv" --draws 20
  grep -q "Exception raised from\|frame #" "$WORK/err" && fail "$kind weights: a C++ backtrace: $(cat "$WORK/err")"
done
cp "$WORK/model/weights.pt" "$WORK/bad/weights.pt"
edit_config() {  # edit_config PYTHON_STATEMENT_ON_c
  "$OPTUNA_PYTHON" -c "import json, sys; c = json.load(open(sys.argv[1])); $1; json.dump(c, open(sys.argv[1], 'w'))" \
    "$WORK/bad/config.json"
}
# expect_config_mismatch NEEDLE PYTHON_STATEMENT_ON_c: weights beside an edited config.json are refused.
expect_config_mismatch() {
  cp "$WORK/model/config.json" "$WORK/bad/config.json"
  edit_config "$2"
  expect_user_error "$1" "$BFHPO" infer "$WORK/bad" --data "$WORK/data.csv" --draws 20
}
mismatch="$WORK/bad/weights.pt: these weights do not belong to the configuration"
expect_config_mismatch "$mismatch in $WORK/bad/config.json" 'c["approximator"]["summary"]["embed_dim"] = 32'
expect_config_mismatch "$mismatch" 'c["approximator"]["flow"]["depth"] = c["approximator"]["flow"]["depth"] + 1'
expect_config_mismatch "a layer the configuration does not build" \
  'c["approximator"]["flow"]["depth"] = c["approximator"]["flow"]["depth"] - 1'
expect_config_mismatch "$mismatch" 'c["approximator"]["flow"]["subnet_width"] = 24'

# Item 17: a study without a COMPLETE trial, as export --best says it (issue 39 item 12); then the study's
# best trial with cut weights.
write_training_study "$WORK/open.json" 1 "\"storage\": \"$WORK/open.journal\""
"$BFHPO" ask "$WORK/open.json" > /dev/null || fail "ask failed"
expect_user_error "open.journal: the study has no COMPLETE trial yet. Fix: run \`bfhpo optimize $WORK/open.json\`" \
  "$BFHPO" infer "$WORK/open.json" --data "$WORK/data.csv" --draws 20
grep -q "exporting" "$WORK/err" && fail "infer speaks of exporting: $(cat "$WORK/err")"
"$BFHPO" optimize "$STUDY" > /dev/null 2>&1 || fail "optimize failed"
cp "$WORK/tiny.journal" "$WORK/journal.before"
expect_user_error "names an input, $WORK/tiny.journal" \
  "$BFHPO" infer "$STUDY" --data "$WORK/data.csv" --draws 20 --out "$WORK/x.csv" --draws-out "$WORK/tiny.journal"
cmp -s "$WORK/tiny.journal" "$WORK/journal.before" || fail "a refused infer changed the journal"
best_weights="$("$BFHPO" export "$STUDY" --best --format json | "$OPTUNA_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["weights"])')"
[ -s "$best_weights" ] || fail "the best trial's weights are not at '$best_weights'"
head -c 1000 "$best_weights" > "$WORK/cut.pt" && cp "$WORK/cut.pt" "$best_weights"
expect_user_error "$best_weights: not weights LibTorch can read" \
  "$BFHPO" infer "$STUDY" --data "$WORK/data.csv" --draws 20
"$BFHPO" infer --help > "$WORK/help"
grep "^usage: bfhpo infer " "$WORK/help" | grep -qF -- "--id-column" || fail "the usage lacks --id-column: $(head -1 "$WORK/help")"

# Item 6: sizes over the memory budget are refused before anything is allocated, with what would fit.
expect_user_error "--draws 1000000000: 7 items x 1000000000 draws need about" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/data.csv" --draws 1000000000
fitting="$(sed -n 's/.*Fix: --draws \([0-9]*\) or fewer.*/\1/p' "$WORK/err")"
[ -n "$fitting" ] && [ "$fitting" -gt 1000 ] && [ "$fitting" -lt 1000000000 ] || fail "no fitting --draws: $(cat "$WORK/err")"
"$OPTUNA_PYTHON" - "$WORK/wide.csv" <<'PY'
import sys
items = 100000
with open(sys.argv[1], "w") as f:
    f.write(",".join(f"i{j}" for j in range(items)) + "\n")
    for p in range(3):
        f.write(",".join("01"[(p + j) % 2] for j in range(items)) + "\n")
PY
expect_user_error "wide.csv: 3 persons x 100000 items need about" \
  "$BFHPO" infer "$WORK/model" --data "$WORK/wide.csv" --draws 20
grep -q "Fix: infer on at most [0-9]* items at a time" "$WORK/err" || fail "no fitting item count: $(cat "$WORK/err")"

# Item 10: item names with a comma or a quote are one RFC 4180 field in both outputs.
data "$WORK/named.csv" 'person,"Q1, reading","say ""hi""",i3,i4,i5,i6,i7'
"$BFHPO" infer "$WORK/model" --data "$WORK/named.csv" --draws 20 --out "$WORK/summary.csv" \
  --draws-out "$WORK/draws.csv" 2> "$WORK/named.err" || fail "infer on quoted names exited $?: $(cat "$WORK/named.err")"
"$OPTUNA_PYTHON" - "$WORK/summary.csv" "$WORK/draws.csv" <<'PY' || fail "the CSV outputs do not parse back"
import csv, sys
names = ["Q1, reading", 'say "hi"', "i3", "i4", "i5", "i6", "i7"]
summary = list(csv.reader(open(sys.argv[1], newline="")))
assert all(len(row) == len(summary[0]) for row in summary), "ragged summary"
assert [row[0] for row in summary[1:]][::3] == names, [row[0] for row in summary[1:]]
draws = list(csv.reader(open(sys.argv[2], newline="")))
assert all(len(row) == len(draws[0]) for row in draws), "ragged draws"
assert sorted(set(row[0] for row in draws[1:])) == sorted(names)
PY

# Item 13: a byte order mark before the id column's name: the id column is still found, not an item.
data "$WORK/bom.csv" $'\xef\xbb\xbfperson,i1,i2,i3,i4,i5,i6,i7'
"$BFHPO" infer "$WORK/model" --data "$WORK/bom.csv" --draws 20 > "$WORK/bom.out" 2> "$WORK/bom.err" ||
  fail "infer on a file with a BOM exited $?: $(cat "$WORK/bom.err")"
grep -q "person" "$WORK/bom.out" && fail "the id column became an item: $(head -3 "$WORK/bom.out")"
[ "$(grep -c ',b,' "$WORK/bom.out")" -eq 7 ] || fail "not 7 items: $(cat "$WORK/bom.out")"
echo "infer hardening: all checks passed"
