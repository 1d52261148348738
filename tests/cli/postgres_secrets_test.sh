# A PostgreSQL storage's password is never printed or stored: a training
# study optimized with --storage URL keeps its weights in <study file>.weights
# (or the study's "weights_dir"), never in a folder named after the URL, and
# neither the database nor status, export (json, csv, bayesflow), report or
# any error message holds the password, unencoded '@' and '/' in it and
# libpq's own URL parse errors included. Names longer than Optuna's schema
# holds and a search_path naming no schema are refused (exit 2, nothing
# written). One database holds several studies, each selected by its name.
source "$(dirname "$0")/lib.sh"
require_postgres

password="${BFHPO_TEST_POSTGRES_URL#*://*:}"; password="${password%@*}"
server="${BFHPO_TEST_POSTGRES_URL#*@}"; server="${server%/*}"
no_password() {  # no_password WHAT FILE...
  local what="$1"; shift
  ! grep -qF -- "$password" "$@" || fail "$what: the password is in $(grep -lF -- "$password" "$@")"
}
expect_masked_error() {  # expect_masked_error SECRET PATTERN COMMAND...: exit 2, PATTERN in the message, no SECRET
  local secret="$1" pattern="$2"; shift 2
  local rc=0
  "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "expected exit 2, got $rc from $*: $(cat "$WORK/err")"
  grep -qF -- "$pattern" "$WORK/err" || fail "no '$pattern' in: $(cat "$WORK/err")"
  ! grep -qF -- "$secret" "$WORK/err" "$WORK/out" || fail "'$secret' printed by $*: $(cat "$WORK/err")"
}

# Weights and every output of a study optimized with --storage URL.
URL="$(pg_database secrets)"
mkdir -p "$WORK/s" "$WORK/run"
write_training_study "$WORK/s/tiny.json" 2
cd "$WORK/run"
"$BFHPO" optimize "$WORK/s/tiny.json" --storage "$URL" > "$WORK/optimize.out" 2> "$WORK/optimize.err" ||
  fail "optimize: $(tail -3 "$WORK/optimize.err")"
[ -z "$(ls -A "$WORK/run")" ] || fail "optimize wrote into the working folder: $(ls -A "$WORK/run")"
ls "$WORK/s/tiny.json.weights/"trial-0.pt > /dev/null || fail "no weights in <study file>.weights: $(ls -R "$WORK/s")"
"$BFHPO" status "$WORK/s/tiny.json" --json --storage "$URL" > "$WORK/status.json"
"$BFHPO" export "$WORK/s/tiny.json" --best --storage "$URL" > "$WORK/best.json"
"$BFHPO" export "$WORK/s/tiny.json" --format csv --storage "$URL" > "$WORK/trials.csv"
"$BFHPO" export "$WORK/s/tiny.json" --format bayesflow --storage "$URL" > "$WORK/bayesflow.json"
"$BFHPO" report "$WORK/s/tiny.json" -o "$WORK/report.html" --storage "$URL"
grep -qF "postgresql://bfhpo:***@$server/" "$WORK/report.html" || fail "the report does not name the storage"
grep -qF "$WORK/s/tiny.json.weights/trial-" "$WORK/best.json" || fail "export --best names no weights: $(cat "$WORK/best.json")"
no_password "outputs" "$WORK/optimize.out" "$WORK/optimize.err" "$WORK/status.json" "$WORK/best.json" \
  "$WORK/trials.csv" "$WORK/bayesflow.json" "$WORK/report.html"
pg_dump "$URL" > "$WORK/dump.sql"
grep -q "bfhpo:weights" "$WORK/dump.sql" || fail "the dump holds no bfhpo:weights"
no_password "the database" "$WORK/dump.sql"

# "weights_dir" in the study file, relative to it; unknown keys are still refused.
URL2="$(pg_database weights_dir)"
write_training_study "$WORK/s/chosen.json" 1 "\"storage\": \"$URL2\", \"weights_dir\": \"shared/w\""
"$BFHPO" optimize "$WORK/s/chosen.json" > /dev/null 2> "$WORK/chosen.err" || fail "weights_dir: $(tail -3 "$WORK/chosen.err")"
ls "$WORK/s/shared/w/"trial-0.pt > /dev/null || fail "no weights in weights_dir: $(ls -R "$WORK/s")"
write_training_study "$WORK/s/typo.json" 1 "\"storage\": \"$URL2\", \"weights_dirs\": \"w\""
expect_masked_error "$password" "did you mean 'weights_dir'" "$BFHPO" optimize "$WORK/s/typo.json"

# export --best with no COMPLETE trial, libpq's parse errors, unencoded '@' and '/' in a password.
URL3="$(pg_database no_complete)"
write_study "$WORK/s/demo.json" 5 "\"storage\": \"$URL3\","
"$BFHPO" ask "$WORK/s/demo.json" > /dev/null
expect_masked_error "$password" "no COMPLETE trial" "$BFHPO" export "$WORK/s/demo.json" --best
expect_masked_error "secretpw" "postgresql://u:***@[::1/db" "$BFHPO" status "$WORK/s/demo.json" --storage "postgresql://u:secretpw@[::1/db"
expect_masked_error "p@ss" "bfhpo:***@$server" "$BFHPO" ask "$WORK/s/demo.json" --storage "postgresql://bfhpo:p@ss@$server/x"
for secret in "se/cret" "cret" "se"; do
  expect_masked_error "$secret" "postgresql://bfhpo:***@" \
    "$BFHPO" ask "$WORK/s/demo.json" --storage "postgresql://bfhpo:se/cret@$server/x"
done
expect_masked_error "k3yphrase" "sslpassword=***" \
  "$BFHPO" ask "$WORK/s/demo.json" --storage "postgresql://bfhpo@127.0.0.1:1/x?sslpassword=k3yphrase"

# A study name longer than Optuna's VARCHAR(512), a search_path naming no schema: exit 2, nothing written.
URL4="$(pg_database limits)"
long_name="$(printf 'n%.0s' $(seq 513))"
write_study "$WORK/s/long.json" 5 "\"storage\": \"$URL4\","
sed -i "s/\"name\": \"demo\"/\"name\": \"$long_name\"/" "$WORK/s/long.json"
expect_masked_error "$password" "513 characters" "$BFHPO" ask "$WORK/s/long.json"
"$BFHPO" ask "$WORK/s/long.json" --storage "$WORK/long.journal" > /dev/null ||
  fail "a long name was refused on a journal, which has no limit"
[ "$(pg_sql "$URL4" "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" = 0 ] || fail "long name: tables written"
expect_masked_error "$password" "search_path" "$BFHPO" ask "$WORK/s/demo.json" --storage "$URL4?options=-c%20search_path%3Dno_such_schema"
expect_masked_error "$password" "search_path" "$BFHPO" status "$WORK/s/demo.json" --storage "$URL4?options=-c%20search_path%3Dno_such_schema"
[ "$(pg_sql "$URL4" "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" = 0 ] || fail "search_path: tables written"

# One database, two studies, each selected by its name.
sed 's/"name": "demo"/"name": "second"/' "$WORK/s/demo.json" > "$WORK/s/second.json"
"$BFHPO" ask "$WORK/s/second.json" > /dev/null || fail "a second study in the same database was refused"
"$BFHPO" ask "$WORK/s/second.json" > /dev/null
[ "$(pg_sql "$URL3" "SELECT string_agg(s.study_name || ':' || (SELECT count(*) FROM trials t WHERE t.study_id = s.study_id), ','
                     ORDER BY s.study_id) FROM studies s")" = "demo:1,second:2" ] ||
  fail "two studies: $(pg_sql "$URL3" "SELECT study_id, study_name FROM studies")"
"$BFHPO" status "$WORK/s/demo.json" --json |
  "$OPTUNA_PYTHON" -c 'import json, sys; s = json.load(sys.stdin); assert len(s["trials"]) == 1, s' ||
  fail "status of demo does not see exactly its own trial"
sed 's/"name": "demo"/"name": "third"/' "$WORK/s/demo.json" > "$WORK/s/third.json"
expect_masked_error "$password" "it holds 'demo', 'second'" "$BFHPO" status "$WORK/s/third.json"
echo "postgres secrets: no password printed or stored; weights beside the study file; limits refused; many studies"
