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

if slurm_running; then
  # The other Slurm tests submit to the same cluster meanwhile: only a job of
  # this study's own name counts.
  write_training_study "$STUDY" 2 '"name": "refused-partition", "storage": "tiny.journal"'
  expect_user_error "$BFHPO_TEST_SLURM_PARTITION" launch "$STUDY" --workers 2 --partition no_such_partition
  grep -qF "no_such_partition" "$WORK/err" || fail "the message does not name the partition: $(cat "$WORK/err")"
  [ -z "$(squeue -h -n bfhpo-refused-partition)" ] || fail "a refused launch submitted a job: $(squeue)"
  [ ! -e "$SHARED/tiny.sbatch" ] || fail "a refused launch wrote the script"
  echo "slurm bad input: unknown partition refused"
fi
echo "slurm bad input: all checks passed"
