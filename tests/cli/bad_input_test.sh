# Bad input to the verbs (tell's arguments, optimize's overrides, damaged or
# foreign journals, a changed search space, a trial a live worker trains):
# exit 2, one message naming the file, the field and the fix, nothing written.
# Malformed study files: bad_study_files_test.sh.
source "$(dirname "$0")/lib.sh"


# tell on unknown / finished trials, a corrupt journal and a journal of another study leave the journal untouched.
write_study "$WORK/demo.json" 5
"$BFHPO" ask "$WORK/demo.json" > /dev/null
"$BFHPO" tell "$WORK/demo.json" --trial 0 --value 1.5 > /dev/null
before="$(sha256sum < "$WORK/demo.json.journal")"
expect_user_error "no trial 7" "$BFHPO" tell "$WORK/demo.json" --trial 7 --value 1
expect_user_error "is COMPLETE, not RUNNING" "$BFHPO" tell "$WORK/demo.json" --trial 0 --value 1
expect_user_error "not a number" "$BFHPO" tell "$WORK/demo.json" --trial 0 --value abc
"$BFHPO" ask "$WORK/demo.json" > /dev/null  # trial 1, RUNNING
before="$(sha256sum < "$WORK/demo.json.journal")"
expect_user_error "'0x10' is not a number" "$BFHPO" tell "$WORK/demo.json" --trial 1 --value 0x10
expect_user_error "'1e5x' is not a number" "$BFHPO" tell "$WORK/demo.json" --trial 1 --value 1e5x
for v in inf -inf +inf Infinity nan NaN 1e400; do
  expect_user_error "is not finite" "$BFHPO" tell "$WORK/demo.json" --trial 1 --value "$v"
done
expect_user_error "a FAIL trial takes no value" "$BFHPO" tell "$WORK/demo.json" --trial 1 --state fail --value 7
expect_user_error "a PRUNED trial takes no value" "$BFHPO" tell "$WORK/demo.json" --trial 1 --state pruned --value 7
expect_user_error "--step -5 is negative" "$BFHPO" tell "$WORK/demo.json" --trial 1 --step -5 --value 1
expect_user_error "--step reports an intermediate value and --state finishes" \
  "$BFHPO" tell "$WORK/demo.json" --trial 1 --step 2 --value 1 --state fail
[ "$before" = "$(sha256sum < "$WORK/demo.json.journal")" ] || fail "a refused tell changed the journal"
"$BFHPO" tell "$WORK/demo.json" --trial 1 --value 1e-3 | grep -q COMPLETE || fail "a plain decimal value was refused"
before="$(sha256sum < "$WORK/demo.json.journal")"

# Lists and numbers of the other front verbs: an empty item anywhere, a number printed as given.
expect_user_error "'8,': '' is not a memory size" "$BFHPO" status "$WORK/demo.json" --memory-levels 8,
expect_user_error "'8,,16': '' is not a memory size" "$BFHPO" report "$WORK/demo.json" --memory-levels 8,,16
expect_user_error "--budget-mb -0.05 is not" "$BFHPO" export "$WORK/demo.json" --best --budget-mb -0.05

sed 's/"name": "demo"/"name": "other"/' "$WORK/demo.json" > "$WORK/other.json"
cp "$WORK/demo.json.journal" "$WORK/other.json.journal"
expect_user_error "no study 'other' in this storage (it holds 'demo')" "$BFHPO" status "$WORK/other.json"
[ "$before" = "$(sha256sum < "$WORK/other.json.journal")" ] || fail "another study's journal was changed"

{ head -c 20 "$WORK/demo.json.journal"; echo; cat "$WORK/demo.json.journal"; } > "$WORK/corrupt.journal"
sed 's/"name": "demo"/"name": "demo", "storage": "corrupt.journal"/' "$WORK/demo.json" > "$WORK/corrupt.json"
corrupt_before="$(sha256sum < "$WORK/corrupt.journal")"
expect_user_error "line 1" "$BFHPO" status "$WORK/corrupt.json"
expect_user_error "line 1" "$BFHPO" ask "$WORK/corrupt.json"
[ "$corrupt_before" = "$(sha256sum < "$WORK/corrupt.journal")" ] || fail "a corrupt journal was changed"

# optimize's overrides obey the study file's rules.
write_training_study "$WORK/overrides.json" 2
expect_user_error "--n-trials -5 is not a positive number of trials" "$BFHPO" optimize "$WORK/overrides.json" --n-trials -5
expect_user_error "--n-trials 0 is not a positive number of trials" "$BFHPO" optimize "$WORK/overrides.json" --n-trials 0
expect_user_error "--timeout" "$BFHPO" optimize "$WORK/overrides.json" --timeout -1
expect_user_error "--timeout" "$BFHPO" optimize "$WORK/overrides.json" --timeout nan
expect_user_error "n-trials" "$BFHPO" optimize "$WORK/overrides.json" --n-trials 3000000000
[ ! -e "$WORK/overrides.json.journal" ] || fail "a refused override wrote a journal"

# A search space changed incompatibly under the same study name (float -> categorical), as Optuna refuses.
write_study "$WORK/changed.json" 5
"$BFHPO" ask "$WORK/changed.json" > /dev/null
before="$(sha256sum < "$WORK/changed.json.journal")"
sed -i 's/"lr":    {"type": "float", "low": 1e-4, "high": 1e-1, "log": true}/"lr": {"type": "categorical", "choices": [0.01, 0.1]}/' "$WORK/changed.json"
grep -q categorical "$WORK/changed.json" || fail "the test did not change the search space"
expect_user_error "search_space.lr': changed incompatibly under the same study name" "$BFHPO" ask "$WORK/changed.json"
expect_user_error "now categorical" "$BFHPO" status "$WORK/changed.json"
[ "$before" = "$(sha256sum < "$WORK/changed.json.journal")" ] || fail "a changed search space wrote to the journal"

# A journal line with a trial state Optuna does not define: replay names the line.
write_study "$WORK/state7.json" 5
"$BFHPO" ask "$WORK/state7.json" > /dev/null
echo '{"op_code": 6, "worker_id": "x", "trial_id": 0, "state": 7, "values": null, "datetime_complete": "2026-01-01T00:00:00"}' \
  >> "$WORK/state7.json.journal"
lines="$(wc -l < "$WORK/state7.json.journal")"
expect_user_error "line $lines" "$BFHPO" status "$WORK/state7.json"
grep -qF "trial state 7 is not one of Optuna's" "$WORK/err" || fail "the message does not name the state: $(cat "$WORK/err")"

# A trial that a live optimize worker trains cannot be told; the worker, interrupted, stops with 130.
STUDY="$WORK/live.json"
write_training_study "$STUDY" 1 \
  '"training": {"epochs": 1000, "num_batches": 6, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'
"$BFHPO" optimize "$STUDY" > "$WORK/live.out" 2> "$WORK/live.err" &
BG_PIDS="$!"
wait_for_line "$STUDY.journal" '"intermediate_value"'
expect_user_error "is being trained by bfhpo optimize (pid $BG_PIDS" "$BFHPO" tell "$STUDY" --trial 0 --state fail
expect_user_error "is being trained" "$BFHPO" tell "$STUDY" --trial 0 --step 1 --value 3
expect_user_error "requeueing it would pull it from under that worker" "$BFHPO" requeue "$STUDY" --trial 0
kill -INT "$BG_PIDS"
rc=0; wait "$BG_PIDS" || rc=$?
BG_PIDS=""
[ "$rc" -eq 130 ] || fail "the worker did not stop as interrupted (exit $rc): $(cat "$WORK/live.err")"

# --epochs whose steps overflow an int (1073741824 x 6): refused naming the flag, nothing trained.
expect_user_error "--epochs 1073741824" "$BFHPO" train "$STUDY" --epochs 1073741824 --out "$WORK/overflow.train"
grep -qF "6442450944 steps" "$WORK/err" || fail "the message does not give the steps: $(cat "$WORK/err")"
[ ! -e "$WORK/overflow.train" ] || fail "train wrote $WORK/overflow.train before refusing"

expect_user_error "unknown verb" "$BFHPO" frobnicate
echo "bad input: all checks passed"
