# --storage replaces the study file's "storage" on every verb that opens the
# study: ask/tell/status/export/report/enqueue/requeue and optimize write and
# read the named journal (relative to the working folder), never the default
# one; --storage naming the study file is refused with exit 2, file intact.
source "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/s" "$WORK/run"
STUDY="$WORK/s/demo.json"
write_study "$STUDY" 5
cd "$WORK/run"

asked="$("$BFHPO" ask "$STUDY" --storage shared.journal)"
trial="$(echo "$asked" | "$OPTUNA_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["trial"])')"
value="$(objective "$asked")"
"$BFHPO" tell "$STUDY" --trial "$trial" --value "$value" --storage shared.journal > /dev/null
[ -s "$WORK/run/shared.journal" ] || fail "ask/tell --storage shared.journal wrote no $WORK/run/shared.journal"
[ ! -e "$STUDY.journal" ] || fail "ask/tell --storage also wrote the study's default journal"
echo '{"lr": 0.01, "depth": 3, "kind": "a"}' > "$WORK/params.json"
"$BFHPO" enqueue "$STUDY" --params "$WORK/params.json" --storage shared.journal > /dev/null
second="$("$BFHPO" ask "$STUDY" --storage "$WORK/run/shared.journal")"
echo "$second" | grep -q '"depth":3' || fail "ask --storage (absolute) did not serve the enqueued params: $second"
"$BFHPO" requeue "$STUDY" --trial 1 --storage shared.journal > /dev/null

"$BFHPO" status "$STUDY" --json --storage shared.journal > "$WORK/status.json"
"$BFHPO" export "$STUDY" --best --storage shared.journal > "$WORK/best.json"
"$BFHPO" report "$STUDY" -o "$WORK/report.html" --storage shared.journal
"$OPTUNA_PYTHON" - "$WORK/status.json" "$WORK/best.json" "$value" <<'PY' || fail "status/export --storage read another journal"
import json, sys
status, best, value = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
assert status["counts"]["COMPLETE"] == 1 and status["counts"]["FAIL"] == 1 and status["counts"]["WAITING"] == 1, status
assert best["value"] == value, (best, value)
PY
grep -q "<svg" "$WORK/report.html" || fail "report --storage drew nothing"
journal_py "$WORK/run/shared.journal" '
assert [t.state for t in trials] == [TS.COMPLETE, TS.FAIL, TS.WAITING], trials
assert trials[0].value == float(args[0])' "$value" || fail "Optuna does not read shared.journal as bfhpo wrote it"

# optimize --storage: the trials go to the named journal.
write_training_study "$WORK/s/tiny.json" 1
"$BFHPO" optimize "$WORK/s/tiny.json" --storage tiny-elsewhere.journal > /dev/null 2> "$WORK/optimize.err" \
  || fail "optimize --storage: $(tail -3 "$WORK/optimize.err")"
[ ! -e "$WORK/s/tiny.json.journal" ] || fail "optimize --storage also wrote the default journal"
journal_py "$WORK/run/tiny-elsewhere.journal" 'assert [t.state for t in trials] == [TS.COMPLETE], trials' \
  || fail "optimize --storage: the named journal does not hold the finished trial"

before="$(sha256sum < "$STUDY")"
expect_user_error "study file" "$BFHPO" ask "$STUDY" --storage "$STUDY"
expect_user_error "--storage" "$BFHPO" status "$STUDY" --storage ""
[ "$(sha256sum < "$STUDY")" = "$before" ] || fail "--storage naming the study file changed it"
echo "storage flag: every verb used the named journal; the study file refused as storage"
