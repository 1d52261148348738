# An ask/tell caller that dies leaves its trial RUNNING: bfhpo never takes it
# by itself; once its heartbeat is older than stale_after_s, `status` lists it
# as abandoned, and `bfhpo requeue` fails it and queues its params, which the
# next ask serves. A fresh RUNNING trial is not abandoned; requeue refuses a
# trial that is not RUNNING (exit 2).
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/demo.json"
write_study "$STUDY" 10
"$OPTUNA_PYTHON" - "$STUDY" <<'PY'
import json, sys
study = json.load(open(sys.argv[1])); study["stale_after_s"] = 20
json.dump(study, open(sys.argv[1], "w"))
PY
"$BFHPO" ask "$STUDY" > "$WORK/asked0"
started=$SECONDS
"$BFHPO" ask "$STUDY" > "$WORK/asked1"
"$BFHPO" tell "$STUDY" --trial 1 --value 1.0 > /dev/null
"$BFHPO" status "$STUDY" --json > "$WORK/fresh.json"
"$OPTUNA_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert not s.get("abandoned"), s["abandoned"]' \
  "$WORK/fresh.json" || fail "a trial asked a moment ago is listed as abandoned"
expect_user_error "RUNNING" "$BFHPO" requeue "$STUDY" --trial 1
left=$((22 - (SECONDS - started)))
[ "$left" -le 0 ] || sleep "$left"
"$BFHPO" status "$STUDY" --json > "$WORK/stale.json"
"$BFHPO" status "$STUDY" > "$WORK/stale.txt"
"$OPTUNA_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert [a["number"] for a in s["abandoned"]] == [0], s.get("abandoned")' \
  "$WORK/stale.json" || fail "the silent trial 0 is not listed as abandoned"
grep -qi "abandoned" "$WORK/stale.txt" || fail "status's table does not show the abandoned trial: $(cat "$WORK/stale.txt")"
"$BFHPO" requeue "$STUDY" --trial 0 > "$WORK/requeued"
"$BFHPO" ask "$STUDY" > "$WORK/asked2"
"$OPTUNA_PYTHON" - "$WORK" <<'PY' || fail "the re-queued params were not served"
import json, sys
w = sys.argv[1]
first, again, out = (json.load(open(f"{w}/{n}")) for n in ("asked0", "asked2", "requeued"))
assert out["trial"] == 0 and out["state"] == "FAIL", out
assert again["trial"] == out["requeued_as"] and again["params"] == first["params"], (first, again, out)
PY
journal_py "$STUDY.journal" '
assert trials[0].state == TS.FAIL, trials[0].state
assert trials[2].state == TS.RUNNING and trials[2].params == trials[0].params
' || fail "Optuna sees another state"
echo "requeue: all checks passed"
