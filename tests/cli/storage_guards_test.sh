# The study file and the weights of another journal are never overwritten:
# a "storage" naming the study file (directly, through "./", or through a
# symlink) is refused with exit 2 and the file left byte for byte; a new
# study at a renamed journal's path saves its weights beside the old trials'
# weights (trial-N-2.pt), which keep their bytes and stay named by the old journal.
source "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/s"
for storage in study.json ./study.json link.json; do
  write_study "$WORK/s/study.json" 3
  ln -sf study.json "$WORK/s/link.json"
  "$OPTUNA_PYTHON" - "$WORK/s/study.json" "$storage" <<'PY'
import json, sys
study = json.load(open(sys.argv[1])); study["storage"] = sys.argv[2]
json.dump(study, open(sys.argv[1], "w"))
PY
  before="$(sha256sum < "$WORK/s/study.json")"
  expect_user_error "storage" "$BFHPO" ask "$WORK/s/study.json"
  grep -qF "study file itself" "$WORK/err" || fail "storage $storage: the message does not say why: $(cat "$WORK/err")"
  [ "$(sha256sum < "$WORK/s/study.json")" = "$before" ] || fail "storage $storage: the study file changed"
done

STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 1
"$BFHPO" optimize "$STUDY" > /dev/null 2> "$WORK/first.err" || fail "first optimize: $(tail -3 "$WORK/first.err")"
mv "$STUDY.journal" "$WORK/old.journal"
old_weights="$STUDY.journal.weights/trial-0.pt"
[ -s "$old_weights" ] || fail "the first study saved no $old_weights"
before="$(sha256sum < "$old_weights")"
"$BFHPO" optimize "$STUDY" > /dev/null 2> "$WORK/second.err" || fail "second optimize: $(tail -3 "$WORK/second.err")"
[ "$(sha256sum < "$old_weights")" = "$before" ] || fail "the new study overwrote the old journal's weights"
for journal in "$WORK/old.journal" "$STUDY.journal"; do
  journal_py "$journal" 'print(trials[0].system_attrs["bfhpo:weights"])' > "$WORK/weights_of"
  path="$(cat "$WORK/weights_of")"
  [ -s "$path" ] || fail "$journal names weights $path that do not exist"
  echo "$path" >> "$WORK/both"
done
[ "$(sort -u "$WORK/both" | wc -l)" -eq 2 ] || fail "both journals name the same weights file: $(cat "$WORK/both")"
head -1 "$WORK/both" | grep -q "trial-0.pt$" || fail "the old journal's weights moved: $(head -1 "$WORK/both")"
tail -1 "$WORK/both" | grep -q "trial-0-2.pt$" || fail "the new study's weights: $(tail -1 "$WORK/both")"
echo "storage guards: all checks passed"
