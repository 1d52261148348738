# The front `bfhpo` links no LibTorch and no libpq (loaded only when a
# PostgreSQL storage opens; the PostgreSQL CLI tests use it) and runs the
# study verbs itself; the training verbs run through bfhpo-train found
# beside it. (help_test checks
# that every verb's --help answers; here: that no LibTorch is loaded for it.)
source "$(dirname "$0")/lib.sh"

if ldd "$BFHPO" | grep -qiE 'libtorch|libc10'; then fail "the front links LibTorch: $(ldd "$BFHPO" | grep -iE 'torch|c10')"; fi
if ldd "$BFHPO" | grep -qi 'libpq'; then fail "the front links libpq at start: $(ldd "$BFHPO" | grep -i libpq)"; fi

# A copy of the front alone: every study verb and every --help work without
# bfhpo-train (so without LibTorch); a training verb names the missing file.
mkdir "$WORK/alone" "$WORK/pair"
cp "$BFHPO" "$WORK/alone/bfhpo"
alone="$WORK/alone/bfhpo"
for verb in $("$alone" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p'); do
  "$alone" "$verb" --help > "$WORK/help" || fail "bfhpo $verb --help without bfhpo-train exited $?"
  grep -q "^usage: bfhpo $verb " "$WORK/help" || fail "bfhpo $verb --help printed no usage: $(cat "$WORK/help")"
done
write_training_study "$WORK/tiny.json" 1
trial="$("$alone" ask "$WORK/tiny.json" | "$OPTUNA_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["trial"])')"
"$alone" tell "$WORK/tiny.json" --trial "$trial" --value 0.5 > /dev/null
"$alone" status "$WORK/tiny.json" --json > "$WORK/status.json"
"$alone" export "$WORK/tiny.json" --best > "$WORK/best.json"
"$alone" export "$WORK/tiny.json" --format bayesflow > "$WORK/bayesflow.json"
"$alone" report "$WORK/tiny.json" -o "$WORK/report.html"
"$OPTUNA_PYTHON" - "$WORK/best.json" <<'PY' || fail "export --best from the front alone: $(cat "$WORK/best.json")"
import json, sys
best = json.load(open(sys.argv[1]))
assert best["value"] == 0.5 and "config" in best and best["config"]["simulator"]["model"], best
PY
expect_user_error "bfhpo-train" "$alone" estimate "$WORK/tiny.json"
grep -qF "$WORK/alone/bfhpo-train" "$WORK/err" || fail "the error does not name the missing file: $(cat "$WORK/err")"

# A training verb's bad option is refused by the front (no bfhpo-train needed), exit 2 with the fix.
expect_user_error "Fix:" "$alone" train "$WORK/tiny.json" --epochs x

# Beside bfhpo-train, from any working folder, a training verb runs.
cp "$BFHPO" "$(dirname "$BFHPO")/bfhpo-train" "$WORK/pair/"
(cd / && "$WORK/pair/bfhpo" estimate "$WORK/tiny.json" --json > "$WORK/estimate.json")
"$OPTUNA_PYTHON" -c 'import json, sys; assert json.load(open(sys.argv[1]))["estimate"]' "$WORK/estimate.json" \
  || fail "estimate through the front printed no estimate: $(cat "$WORK/estimate.json")"
echo "front: no LibTorch linked; study verbs and every --help run without bfhpo-train; training verbs run beside it"
