# Bad input: exit 2, one message naming the file, the field and the fix, and nothing written.
source "$(dirname "$0")/lib.sh"

expect_user_error() {  # expect_user_error NEEDLE COMMAND...
  local needle="$1"; shift
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "expected exit 2, got $rc from: $* ($(cat "$WORK/err"))"
  grep -qF -- "$needle" "$WORK/err" || fail "message lacks '$needle': $(cat "$WORK/err")"
  grep -qF "Fix:" "$WORK/err" || fail "message lacks a fix: $(cat "$WORK/err")"
}

bad_study() {  # bad_study NAME JSON -> path; the study must not create a journal
  printf '%s' "$2" > "$WORK/$1.json"
  echo "$WORK/$1.json"
}

space='"search_space": {"x": {"type": "float", "low": 0, "high": 1}}'
expect_user_error "field 'name'" "$BFHPO" ask "$(bad_study noname "{$space}")"
expect_user_error "search_space.x.low" "$BFHPO" ask \
  "$(bad_study lowhigh '{"name": "s", "search_space": {"x": {"type": "float", "low": 2, "high": 1}}}')"
expect_user_error "log-scaled" "$BFHPO" ask \
  "$(bad_study logzero '{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1, "log": true}}}')"
expect_user_error "unknown type" "$BFHPO" ask \
  "$(bad_study type '{"name": "s", "search_space": {"x": {"type": "gaussian", "low": 0, "high": 1}}}')"
expect_user_error "search_space.h.when" "$BFHPO" ask \
  "$(bad_study when "{\"name\": \"s\", \"search_space\": {\"h\": {\"type\": \"int\", \"low\": 1, \"high\": 3, \"when\": {\"ghost\": 1}}}}")"
expect_user_error "not valid JSON" "$BFHPO" ask "$(bad_study syntax '{"name": "s", ')"
expect_user_error "direction" "$BFHPO" ask "$(bad_study direction "{\"name\": \"s\", \"direction\": \"down\", $space}")"
expect_user_error "did you mean 'sampler.n_startup_trials'" "$BFHPO" ask \
  "$(bad_study sampler_key "{\"name\": \"s\", \"sampler\": {\"type\": \"tpe\", \"n_startup_trails\": 5}, $space}")"
expect_user_error "sampler.startup" "$BFHPO" ask \
  "$(bad_study sampler_startup "{\"name\": \"s\", \"sampler\": {\"type\": \"tpe\", \"startup\": \"sobol\"}, $space}")"
expect_user_error 'use "bfhpo" or "optuna"' "$BFHPO" ask \
  "$(bad_study sampler_preset "{\"name\": \"s\", \"sampler\": {\"type\": \"tpe\", \"preset\": \"optuna3\"}, $space}")"
# Training studies: a search-space name that maps to no field, a bad memory section.
write_training_study "$WORK/dept.json" 2 '"search_space": {"flow.dept": {"type": "int", "low": 1, "high": 3}}'
expect_user_error "did you mean 'flow.depth'" "$BFHPO" optimize "$WORK/dept.json"
grep -qF "$WORK/dept.json" "$WORK/err" || fail "message does not name the file: $(cat "$WORK/err")"
grep -qF "search_space.flow.dept" "$WORK/err" || fail "message does not name the field: $(cat "$WORK/err")"
write_training_study "$WORK/budget.json" 2 '"memory": {"budget_mb": -5}'
expect_user_error "memory.budget_mb" "$BFHPO" optimize "$WORK/budget.json"
grep -qF "$WORK/budget.json" "$WORK/err" || fail "message does not name the file: $(cat "$WORK/err")"
for f in "$WORK"/*.json; do
  [ ! -e "$f.journal" ] || fail "a bad study wrote a journal: $f.journal"
done

# tell on unknown / finished trials, a corrupt journal and a journal of another study leave the journal untouched.
write_study "$WORK/demo.json" 5
"$BFHPO" ask "$WORK/demo.json" > /dev/null
"$BFHPO" tell "$WORK/demo.json" --trial 0 --value 1.5 > /dev/null
before="$(sha256sum < "$WORK/demo.json.journal")"
expect_user_error "no trial 7" "$BFHPO" tell "$WORK/demo.json" --trial 7 --value 1
expect_user_error "is COMPLETE, not RUNNING" "$BFHPO" tell "$WORK/demo.json" --trial 0 --value 1
expect_user_error "not a number" "$BFHPO" tell "$WORK/demo.json" --trial 0 --value abc
[ "$before" = "$(sha256sum < "$WORK/demo.json.journal")" ] || fail "a refused tell changed the journal"

sed 's/"name": "demo"/"name": "other"/' "$WORK/demo.json" > "$WORK/other.json"
cp "$WORK/demo.json.journal" "$WORK/other.json.journal"
expect_user_error "holds study 'demo', not 'other'" "$BFHPO" ask "$WORK/other.json"
[ "$before" = "$(sha256sum < "$WORK/other.json.journal")" ] || fail "another study's journal was changed"

{ head -c 20 "$WORK/demo.json.journal"; echo; cat "$WORK/demo.json.journal"; } > "$WORK/corrupt.journal"
sed 's/"name": "demo"/"name": "demo", "storage": "corrupt.journal"/' "$WORK/demo.json" > "$WORK/corrupt.json"
corrupt_before="$(sha256sum < "$WORK/corrupt.journal")"
expect_user_error "line 1" "$BFHPO" status "$WORK/corrupt.json"
expect_user_error "line 1" "$BFHPO" ask "$WORK/corrupt.json"
[ "$corrupt_before" = "$(sha256sum < "$WORK/corrupt.journal")" ] || fail "a corrupt journal was changed"

expect_user_error "unknown verb" "$BFHPO" frobnicate
echo "bad input: all checks passed"
