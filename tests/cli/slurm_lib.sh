# Helpers of the Slurm tests (source after lib.sh). They run against the
# single-node cluster scripts/with-slurm starts (it exports SLURM_CONF and
# BFHPO_TEST_SLURM_PARTITION); require_slurm exits 77 (ctest: Skipped) without it.

# make_shared_folder: $SHARED, a scratch folder for a study and its journal
# outside the node-local folders (/tmp, /var/tmp, /dev/shm, /run: bfhpo
# launch refuses those, other nodes could not share them): beside the build,
# else in $HOME, else /var/lib (a checkout under /tmp, as CI's may be); jobs
# started by launch_array are cancelled and the folder removed on exit.
make_shared_folder() {
  local parent
  for parent in "$(dirname "$BFHPO")" "${HOME:-/root}" /var/lib; do
    case "$(realpath -m "$parent")/" in
      /tmp/* | /var/tmp/* | /dev/shm/* | /run/*) continue ;;
    esac
    [ -d "$parent" ] && [ -w "$parent" ] && break
  done
  SHARED="$(mktemp -d "$parent/bfhpo-slurm-test.XXXXXX")"
  SLURM_JOBS=""
  trap slurm_cleanup EXIT
}
slurm_running() { [ -n "${BFHPO_TEST_SLURM_PARTITION:-}" ] && command -v sbatch >/dev/null 2>&1; }
require_slurm() {
  slurm_running || { echo "Skipped: no Slurm cluster; run under scripts/with-slurm"; exit 77; }
  make_shared_folder
}
slurm_cleanup() {
  for job in $SLURM_JOBS; do scancel "$job" 2>/dev/null || true; done
  for job in $SLURM_JOBS; do wait_for_job "$job" 30 2>/dev/null || true; done
  rm -rf "$SHARED"
  [ -z "${PG_DATABASES:-}" ] || pg_drop_databases
  cleanup
}

# launch_array STUDY WORKERS [LAUNCH OPTIONS...]: submits the study's workers
# on the test partition; the array's job id in $JOB.
launch_array() {
  local study="$1" workers="$2"; shift 2
  "$BFHPO" launch "$study" --workers "$workers" --partition "$BFHPO_TEST_SLURM_PARTITION" "$@" \
    > "$WORK/launch.out" 2> "$WORK/launch.err" || fail "bfhpo launch exited $?: $(cat "$WORK/launch.err")"
  JOB="$(sed -n 's/^submitted job array \([0-9][0-9]*\):.*/\1/p' "$WORK/launch.out")"
  [ -n "$JOB" ] || fail "bfhpo launch printed no job id: $(cat "$WORK/launch.out")"
  SLURM_JOBS="$SLURM_JOBS $JOB"
}

# wait_for_job ID [SECONDS]: polls squeue until the job (an array, or one task ID_N) has left it.
wait_for_job() {
  local deadline=$((SECONDS + ${2:-120}))
  while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "job $1 still queued or running after ${2:-120} s: $(squeue -j "$1")"
    sleep 0.3
  done
}

# status_py STUDY SCRIPT: runs SCRIPT with `status` = `bfhpo status STUDY --json`,
# `trials` its trials and `worker(t)` the Slurm part of a trial's worker record.
status_py() {
  "$BFHPO" status "$1" --json > "$WORK/status.json" || fail "bfhpo status exited $?"
  "$OPTUNA_PYTHON" - "$WORK/status.json" <<PY
import json, sys
status = json.load(open(sys.argv[1]))
trials = status["trials"]
def worker(t):
    return t["system_attrs"].get("bfhpo:worker", {}).get("slurm")
$2
PY
}
