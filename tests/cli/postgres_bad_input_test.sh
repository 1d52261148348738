# A PostgreSQL storage that cannot be used: an unreachable server, a wrong
# password, a missing database, another tool's tables, an unknown Optuna
# schema version. Each: exit 2, a message naming the URL with the password
# hidden and the fix, and nothing written.
source "$(dirname "$0")/lib.sh"
require_postgres

password="${BFHPO_TEST_POSTGRES_URL#*://*:}"; password="${password%@*}"
server="${BFHPO_TEST_POSTGRES_URL#*@}"; server="${server%/*}"

expect_refusal() {  # expect_refusal NAME URL PATTERN...: `bfhpo ask` on a study stored at URL
  local name="$1" url="$2"; shift 2
  write_study "$WORK/$name.json" 5
  sed -i "s|\"seed\": 1,|\"seed\": 1, \"storage\": \"$url\",|" "$WORK/$name.json"
  local rc=0
  "$BFHPO" ask "$WORK/$name.json" > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2: $(cat "$WORK/$name.err")"
  grep -q -- "$password" "$WORK/$name.err" && fail "$name: the password is in the message"
  for pattern in "$@"; do
    grep -q -- "$pattern" "$WORK/$name.err" || fail "$name: no '$pattern' in: $(cat "$WORK/$name.err")"
  done
  [ ! -s "$WORK/$name.out" ] || fail "$name: printed a trial"
}

expect_refusal unreachable "postgresql://bfhpo:$password@127.0.0.1:1/hpo" \
  "postgresql://bfhpo:\*\*\*@127.0.0.1:1/hpo" "start PostgreSQL"
db="$(pg_database wrong_password)"
expect_refusal wrong_password "postgresql://bfhpo:not-$password@$server/${db##*/}" \
  "password authentication failed" ":\*\*\*@" "correct the user and password"
[ "$(pg_sql "$db" "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" = 0 ] || fail "wrong password: tables written"
expect_refusal no_database "${BFHPO_TEST_POSTGRES_URL%/*}/bfhpo_no_such_db_$$" "does not exist" "createdb"

db="$(pg_database foreign)"
pg_sql "$db" "CREATE TABLE invoices (id INTEGER); CREATE TABLE customers (id INTEGER)"
expect_refusal foreign "$db" "another tool" "customers, invoices" "database of its own"
[ "$(pg_sql "$db" "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'")" = "customers,invoices" ] ||
  fail "foreign: tables were added"

db="$(pg_database future)"
write_study "$WORK/ok.json" 5
sed -i "s|\"seed\": 1,|\"seed\": 1, \"storage\": \"$db\",|" "$WORK/ok.json"
"$BFHPO" ask "$WORK/ok.json" > /dev/null  # creates Optuna's schema and one trial
pg_sql "$db" "UPDATE alembic_version SET version_num = 'v9.0.0.a'"
before="$(pg_sql "$db" "SELECT count(*) FROM trials")"
expect_refusal future "$db" "'v9.0.0.a' is not one bfhpo knows"
[ "$(pg_sql "$db" "SELECT count(*) FROM trials")" = "$before" ] || fail "future: a trial was written"
echo "postgres bad input: all checks passed"
