# bfhpo launch refuses, with exit 2, a message naming the fix, and nothing
# submitted or written: a storage workers on other nodes cannot share (the
# default journal, a journal or study under /tmp or /dev/shm, also through a
# link), a --storage holding a password the script would store, bad options,
# a study bfhpo optimize cannot run, sbatch missing from PATH, and (against
# scripts/with-slurm's cluster, when it runs) an unknown partition.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
make_shared_folder
STUDY="$SHARED/tiny.json"
launch() { "$BFHPO" launch "$@"; }

write_training_study "$STUDY" 2
expect_user_error "default journal" launch "$STUDY" --workers 2 --dry-run
expect_user_error "under /tmp" launch "$STUDY" --workers 2 --storage /tmp/tiny.journal --dry-run
expect_user_error "under /dev/shm" launch "$STUDY" --workers 2 --storage /dev/shm/tiny.journal --dry-run
ln -s /tmp "$SHARED/scratch"
expect_user_error "under /tmp" launch "$STUDY" --workers 2 --storage "$SHARED/scratch/tiny.journal" --dry-run
expect_user_error "does not exist" launch "$STUDY" --workers 2 --storage "$SHARED/no/tiny.journal" --dry-run
write_training_study "$WORK/tiny.json" 2 '"storage": "'"$SHARED"'/tiny.journal"'
expect_user_error "study file is under /tmp" launch "$WORK/tiny.json" --workers 2 --dry-run
expect_user_error "password" launch "$STUDY" --workers 2 --storage "postgresql://u:s3cret@db.example/x" --dry-run
grep -qF s3cret "$WORK/err" && fail "the password was printed: $(cat "$WORK/err")"

write_training_study "$STUDY" 2 '"storage": "tiny.journal"'
expect_user_error "--workers" launch "$STUDY" --workers 0 --dry-run
expect_user_error "--gpus-per-worker" launch "$STUDY" --workers 2 --gpus-per-worker 2 --dry-run
expect_user_error "--time" launch "$STUDY" --workers 2 --time 2 --grace 120 --dry-run
expect_user_error "--time" launch "$STUDY" --workers 2 --time 1:2:3:4 --dry-run
expect_user_error "--sbatch-arg" launch "$STUDY" --workers 2 --sbatch-arg qos=long --dry-run
write_training_study "$SHARED/gpu.json" 2 '"storage": "gpu.journal",
  "training": {"epochs": 2, "num_batches": 3, "batch_size": 8, "validation_sims": 8, "device": "cuda"}'
expect_user_error "--gpus-per-worker 1" launch "$SHARED/gpu.json" --workers 2 --gpus-per-worker 0 --dry-run
write_study "$SHARED/external.json" 5 '"storage": "external.journal",'
expect_user_error "ask and tell" launch "$SHARED/external.json" --workers 2 --dry-run

# Nothing on PATH: no sbatch (bfhpo itself is named by its full path).
expect_user_error "sbatch is not on PATH" env PATH=/nonexistent "$BFHPO" launch "$STUDY" --workers 2
[ ! -e "$SHARED/tiny.sbatch" ] || fail "a refused launch wrote the script"
[ ! -e "$SHARED/tiny.journal" ] || fail "a refused launch created the journal"

# A fake sbatch, alone on PATH (so no sinfo checks --partition): whether launch submitted.
FAKE="$WORK/fake-slurm"
mkdir "$FAKE"
printf '#!/bin/sh\necho "$@" >> %s/sbatch-calls\necho 4242\n' "$WORK" > "$FAKE/sbatch"
chmod +x "$FAKE/sbatch"
fake_launch() { env PATH="$FAKE" "$BFHPO" launch "$@"; }
submitted() { [ -e "$WORK/sbatch-calls" ] && wc -l < "$WORK/sbatch-calls" || echo 0; }
fake_launch "$STUDY" --workers 2 --account acct > "$WORK/out" 2> "$WORK/err" || fail "the fake launch: $(cat "$WORK/err")"
[ "$(submitted)" = 1 ] || fail "the fake sbatch was not run once"
grep -qx "#SBATCH --account=acct" "$SHARED/tiny.sbatch" || fail "no account line: $(cat "$SHARED/tiny.sbatch")"
rm "$SHARED/tiny.sbatch"

# A control character in any value the script holds would start a shell line
# of its own (and end sbatch's #SBATCH lines): refused, nothing written or submitted.
injected=$'acct\ntouch '"$WORK/injected"
# refused_script NEEDLE LAUNCH_ARGUMENTS...: exit 2 with --dry-run (no script printed) and without.
refused_script() {
  local needle="$1"; shift
  expect_user_error "$needle" fake_launch "$@" --dry-run
  [ ! -s "$WORK/out" ] || fail "a refused dry run printed a script: $(cat "$WORK/out")"
  expect_user_error "$needle" fake_launch "$@"
  [ "$(submitted)" = 1 ] || fail "a refused launch ran sbatch: $(cat "$WORK/sbatch-calls")"
  [ -z "$(ls "$SHARED" | grep '\.sbatch$')" ] || fail "a refused launch wrote a script: $(ls "$SHARED")"
}
refused_script "control character" "$STUDY" --workers 2 --account "$injected"
refused_script "control character" "$STUDY" --workers 2 --partition "$injected"
refused_script "control character" "$STUDY" --workers 2 --sbatch-arg=--qos=$'a\rb'
refused_script "control character" "$STUDY" --workers 2 --storage "$SHARED/"$'a\nb.journal'
refused_script "one Slurm name" "$STUDY" --workers 2 --account "a --wrap=b"
cp "$STUDY" "$SHARED/"$'two\nlines.json'
refused_script "control character" "$SHARED/"$'two\nlines.json' --workers 2
rm "$SHARED/"$'two\nlines.json'
# #SBATCH --output cannot hold a space or a % in the log's name (the study's) either.
for name in "my study" "50%"; do
  cp "$STUDY" "$SHARED/$name.json"
  refused_script "its name" "$SHARED/$name.json" --workers 2
  rm "$SHARED/$name.json"
done
[ ! -e "$WORK/injected" ] || fail "the injected command ran"

# The script (STEM.sbatch beside the study) never replaces the study, its journal or the lock file.
write_training_study "$SHARED/q.sbatch" 2 '"storage": "q.journal"'
cp "$SHARED/q.sbatch" "$WORK/q.before"
expect_user_error "is the study file" fake_launch "$SHARED/q.sbatch" --workers 2
cmp -s "$SHARED/q.sbatch" "$WORK/q.before" || fail "launch wrote over the study file"
write_training_study "$SHARED/j.json" 2 '"storage": "j.journal"'
expect_user_error "is the study's journal" fake_launch "$SHARED/j.json" --workers 2 --storage "$SHARED/j.sbatch"
echo '{"op_code": 0, "worker_id": "w", "study_name": "j", "directions": [1]}' > "$SHARED/j.sbatch"
cp "$SHARED/j.sbatch" "$WORK/j.before"
expect_user_error "is the study's journal" fake_launch "$SHARED/j.json" --workers 2 --storage "$SHARED/./j.sbatch"
cmp -s "$SHARED/j.sbatch" "$WORK/j.before" || fail "launch wrote over the journal"
write_training_study "$SHARED/k.json" 2 '"storage": "k.sbatch"'
expect_user_error "is the study's journal" fake_launch "$SHARED/k.json" --workers 2
[ "$(submitted)" = 1 ] || fail "a refused launch ran sbatch: $(cat "$WORK/sbatch-calls")"
echo "slurm bad input: control characters and the script's file refused"

# A PostgreSQL server on this host, however the URL names it: a note (other nodes reach their own).
for url in "postgresql://127.0.0.1:5432/x" "postgresql:///x?host=localhost" "postgresql://u@localhost/x" \
           "postgresql://u@db.example/x?host=%2Fvar%2Frun%2Fpostgresql"; do
  fake_launch "$STUDY" --workers 2 --storage "$url" --dry-run > "$WORK/out" 2> "$WORK/err" || fail "launch: $(cat "$WORK/err")"
  grep -qF "is on localhost" "$WORK/err" || fail "no note for $url: $(cat "$WORK/err")"
done
fake_launch "$STUDY" --workers 2 --storage "postgresql://u@db.example:5432/x" --dry-run > "$WORK/out" 2> "$WORK/err"
[ ! -s "$WORK/err" ] || fail "a note for a server on another host: $(cat "$WORK/err")"
# sbatch failing because slurmctld does not answer: said so, not "correct the option".
DEAD="$WORK/dead-slurm"
mkdir "$DEAD"
printf '#!/bin/sh\necho "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' \
  > "$DEAD/sbatch"
chmod +x "$DEAD/sbatch"
expect_user_error "controller is not answering" env PATH="$DEAD" "$BFHPO" launch "$STUDY" --workers 2
grep -qF "correct the option" "$WORK/err" && fail "a dead controller blamed on an option: $(cat "$WORK/err")"
rm -f "$SHARED/tiny.sbatch"

if slurm_running; then
  # The other Slurm tests submit to the same cluster meanwhile: only a job of
  # this study's own name counts.
  write_training_study "$STUDY" 2 '"name": "refused-partition", "storage": "tiny.journal"'
  expect_user_error "$BFHPO_TEST_SLURM_PARTITION" launch "$STUDY" --workers 2 --partition no_such_partition
  grep -qF "no_such_partition" "$WORK/err" || fail "the message does not name the partition: $(cat "$WORK/err")"
  [ -z "$(squeue -h -n bfhpo-refused-partition)" ] || fail "a refused launch submitted a job: $(squeue)"
  [ ! -e "$SHARED/tiny.sbatch" ] || fail "a refused launch wrote the script"
  echo "slurm bad input: unknown partition refused"
  # A line break in --account would run the rest as a command of the batch script.
  expect_user_error "control character" launch "$STUDY" --workers 1 --partition "$BFHPO_TEST_SLURM_PARTITION" \
    --account $'acct\ntouch '"$WORK/injected-on-slurm"
  [ -z "$(squeue -h -n bfhpo-refused-partition)" ] || fail "a refused launch submitted a job: $(squeue)"
  sleep 2
  [ ! -e "$WORK/injected-on-slurm" ] || fail "the injected command ran on Slurm"
fi
echo "slurm bad input: all checks passed"
