# Every verb the top-level usage lists answers --help and -h with its usage and
# options on stdout and exit 0, even a verb with required options (tell's
# --trial); without them the verb still refuses with exit 2.
source "$(dirname "$0")/lib.sh"
"$BFHPO" --help > "$WORK/usage" || fail "bfhpo --help exited $?"
verbs="$(sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$WORK/usage")"
[ "$(echo "$verbs" | wc -w)" -ge 10 ] || fail "the usage lists too few verbs: $verbs"
for verb in $verbs; do
  for flag in --help -h; do
    "$BFHPO" "$verb" "$flag" > "$WORK/out" 2> "$WORK/err" || fail "bfhpo $verb $flag exited $?: $(cat "$WORK/err")"
    grep -q "^usage: bfhpo $verb " "$WORK/out" || fail "bfhpo $verb $flag printed no usage: $(head -3 "$WORK/out")"
  done
  # The usage line names every option the verb takes (--output as -o).
  usage="$(head -1 "$WORK/out" | sed 's/\[-o /[--output /g')"
  for option in $(sed -n '2,$p' "$WORK/out" | grep -oE '^ +(-[a-z] \[ )?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
    [ "$option" = --help ] || case "$usage" in *"$option"*) ;; *) fail "bfhpo $verb's usage lacks $option: $usage" ;; esac
  done
done
write_study "$WORK/demo.json" 5
expect_user_error "'--trial' is required" "$BFHPO" tell "$WORK/demo.json" --value 1
echo "help: $(echo $verbs | wc -w) verbs answer --help and -h"
