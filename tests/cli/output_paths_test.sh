# Issue 25 items 3, 4 and 7: an output path never loses what it names. For
# infer's --out and --draws-out, export -o and report -o: a symlink to a file
# stays a link and the file is replaced; a FIFO, a character device (a mknod
# copy of /dev/null, never the system's) and /dev/stdout (on a file and on a
# pipe) are written through; a folder is refused (exit 2) and nothing is left
# beside it. export on a full disk exits 2 naming the file and the cause and
# the previous export stays byte-identical; train --out an existing file is
# refused before anything is written.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 1
"$BFHPO" optimize "$STUDY" > "$WORK/optimize.out" 2>&1 || fail "optimize: $(tail -3 "$WORK/optimize.out")"
DATA="$WORK/data.csv"
awk 'BEGIN { print "id,i1,i2,i3,i4,i5,i6,i7"
             for (p = 0; p < 40; p++) { line = "p" p; for (j = 1; j <= 7; j++) line = line "," ((p * j + p + j) % 3 > 0); print line } }' > "$DATA"

infer_out() { "$BFHPO" infer "$STUDY" --data "$DATA" --draws 40 --seed 1 --out "$1"; }
infer_draws_out() { "$BFHPO" infer "$STUDY" --data "$DATA" --draws 40 --seed 1 --out "$WORK/summary.csv" --draws-out "$1"; }
export_out() { "$BFHPO" export "$STUDY" --format json -o "$1"; }
report_out() { "$BFHPO" report "$STUDY" -o "$1"; }

# check_writer WRITER: WRITER PATH writes one output to PATH and nothing else to stdout.
check_writer() {
  local writer="$1" T="$WORK/$1"
  mkdir "$T"
  "$writer" "$T/plain" 2> "$WORK/err" || fail "$writer to a new file: $(cat "$WORK/err")"
  [ -s "$T/plain" ] || fail "$writer wrote nothing"

  mkdir "$T/real"
  echo old > "$T/real/file"
  ln -s real/file "$T/link"
  "$writer" "$T/link" || fail "$writer through a symlink exited $?"
  [ -L "$T/link" ] || fail "$writer replaced the symlink with a file"
  cmp -s "$T/plain" "$T/real/file" || fail "$writer did not replace the file the symlink points to"

  mkfifo "$T/fifo"
  cat "$T/fifo" > "$T/from-fifo" &
  local reader=$!
  BG_PIDS="$reader"
  "$writer" "$T/fifo" || fail "$writer into a FIFO exited $?"
  [ -p "$T/fifo" ] || fail "$writer replaced the FIFO with a file"
  wait "$reader"
  BG_PIDS=""
  cmp -s "$T/plain" "$T/from-fifo" || fail "$writer's bytes did not come out of the FIFO"

  if mknod "$T/null" c 1 3 2>/dev/null; then
    "$writer" "$T/null" || fail "$writer into a character device exited $?"
    [ -c "$T/null" ] || fail "$writer replaced a character device with a file"
  else
    echo "mknod needs root: the character device is not checked"
  fi

  # /dev/stdout through a link of our own: a bfhpo that renames replaces this link, not the system's.
  ln -s /dev/stdout "$T/stdout"
  "$writer" "$T/stdout" > "$T/captured-file" || fail "$writer to /dev/stdout on a file exited $?"
  "$writer" "$T/stdout" | cat > "$T/captured-pipe" || fail "$writer to /dev/stdout on a pipe exited $?"
  [ -L "$T/stdout" ] || fail "$writer replaced the link to /dev/stdout"
  cmp -s "$T/plain" "$T/captured-file" || fail "$writer --out /dev/stdout (a file) printed: $(head -c 300 "$T/captured-file")"
  cmp -s "$T/plain" "$T/captured-pipe" || fail "$writer --out /dev/stdout (a pipe) printed: $(head -c 300 "$T/captured-pipe")"

  mkdir "$T/folder"
  expect_user_error "is a folder" "$writer" "$T/folder"
  [ -z "$(ls -A "$T/folder")" ] || fail "$writer wrote into the folder: $(ls "$T/folder")"
  local left
  left="$(ls "$T" | grep -vxE 'plain|real|link|fifo|from-fifo|null|stdout|captured-file|captured-pipe|folder' || true)"
  [ -z "$left" ] || fail "$writer left files behind: $left"
}
check_writer infer_out
check_writer infer_draws_out
check_writer export_out
check_writer report_out

# export on a full disk: a small tmpfs, or where mounting is not allowed a 1 KiB file-size limit.
DISK="$WORK/disk"
mkdir "$DISK"
export_out "$WORK/export.json"
[ "$(wc -c < "$WORK/export.json")" -gt 2048 ] || fail "the export is too small to overflow a 1 KiB limit"
if mount -t tmpfs -o size=64k tmpfs "$DISK" 2>/dev/null; then
  trap 'umount "$DISK" 2>/dev/null || true; cleanup' EXIT
  full_disk() { "$@"; }
  cause="No space left on device"
else
  full_disk() { (trap '' XFSZ; ulimit -f 1; exec "$@"); }
  cause="File too large"
fi
printf 'the previous export\n' > "$DISK/export.json"
cp "$DISK/export.json" "$WORK/previous"
if [ "$cause" = "No space left on device" ]; then
  dd if=/dev/zero of="$DISK/filler" bs=1k 2>/dev/null || true
fi
expect_user_error "$cause" full_disk export_out "$DISK/export.json"
grep -qF "$DISK/export.json" "$WORK/err" || fail "the error does not name the file: $(cat "$WORK/err")"
cmp -s "$WORK/previous" "$DISK/export.json" || fail "a failed export changed the previous one: $(head -c 200 "$DISK/export.json")"
left="$(ls "$DISK" | grep -vxE 'export.json|filler' || true)"
[ -z "$left" ] || fail "a failed export left files behind: $left"

# train --out an existing file: refused before training, the file untouched, nothing beside it.
printf 'not a folder\n' > "$WORK/existing"
expect_user_error "is a file, not a folder" "$BFHPO" train "$STUDY" --out "$WORK/existing"
[ "$(cat "$WORK/existing")" = "not a folder" ] || fail "train changed the file given as --out"
left="$(ls "$WORK" | grep '^existing.' || true)"
[ -z "$left" ] || fail "train left files behind: $left"
echo "output paths: all checks passed"
