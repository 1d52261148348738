# status and export read a journal they may not write (a read-only copy or
# mount): no write permission needed, nothing created beside it.
source "$(dirname "$0")/lib.sh"
write_study "$WORK/demo.json" 3
for i in 0 1 2; do
  asked="$("$BFHPO" ask "$WORK/demo.json")"
  "$BFHPO" tell "$WORK/demo.json" --trial "$i" --value "$(objective "$asked")" > /dev/null
done
chmod 755 "$WORK"
chmod 444 "$WORK/demo.json.journal" "$WORK/demo.json"
chmod 555 "$WORK"
# root ignores permissions: read as an unprivileged user then.
as_reader=()
[ "$(id -u)" -eq 0 ] && as_reader=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
before="$(ls -A "$WORK")"
"${as_reader[@]}" "$BFHPO" status "$WORK/demo.json" > "$WORK.status" 2>&1 \
  || { chmod 755 "$WORK"; fail "status on a read-only journal: $(cat "$WORK.status")"; }
grep -q "3 of 3 trials finished" "$WORK.status" || { chmod 755 "$WORK"; fail "status: $(cat "$WORK.status")"; }
"${as_reader[@]}" "$BFHPO" export "$WORK/demo.json" --format csv > "$WORK.csv" 2>&1 \
  || { chmod 755 "$WORK"; fail "export on a read-only journal: $(cat "$WORK.csv")"; }
[ "$(wc -l < "$WORK.csv")" -eq 4 ] || { chmod 755 "$WORK"; fail "csv: $(cat "$WORK.csv")"; }
# A writer is refused with exit 2 and a message naming the journal.
set +e
"${as_reader[@]}" "$BFHPO" ask "$WORK/demo.json" > "$WORK.ask" 2>&1
rc=$?
set -e
chmod 755 "$WORK"
rm -f "$WORK.status" "$WORK.csv"
[ "$rc" -eq 2 ] || fail "ask on a read-only journal exits $rc: $(cat "$WORK.ask")"
grep -q "demo.json.journal" "$WORK.ask" || fail "the refusal names the journal: $(cat "$WORK.ask")"
rm -f "$WORK.ask"
[ "$(ls -A "$WORK")" = "$before" ] || fail "a reader created files: $(ls -A "$WORK")"
echo "read-only: all checks passed"
