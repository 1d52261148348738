# A study as a 3-task Slurm job array on PostgreSQL, one task cancelled
# (scancel) in the middle of a trial: the others re-run that trial and
# finish the study with exactly n_trials finished trials, unique trial
# numbers and nothing RUNNING or WAITING; every trial names its worker's job,
# task and node; each task logs beside the study; the database password is in
# neither the script nor launch's output nor a path (weights lie beside the
# study file).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
require_postgres
require_slurm
url="$(pg_database slurm)"
password="${url#postgresql://*:}"
password="${password%%@*}"
STUDY="$SHARED/tiny.json"
write_training_study "$STUDY" 4 '"storage": "'"$url"'",
  "training": {"epochs": 60, "num_batches": 6, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'

launch_array "$STUDY" 3
grep -qF "$password" "$SHARED/tiny.sbatch" "$WORK/launch.out" "$WORK/launch.err" &&
  fail "the password is in the script or launch's output"
# A trial that has reported an epoch (the schema appears with the first worker): its task is cancelled mid-trial.
deadline=$((SECONDS + 120))
until trial="$(pg_sql "$url" "SELECT t.number FROM trials t JOIN trial_intermediate_values v USING (trial_id)
                            WHERE t.state = 'RUNNING' LIMIT 1" 2>/dev/null)" && [ -n "$trial" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "no trial reported an epoch in 120 s: $(squeue)"
  sleep 0.2
done
task="$(status_py "$STUDY" "print(worker(trials[$trial])['array_task_id'])")"
scancel "${JOB}_$task"
wait_for_job "$JOB" 180

status_py "$STUDY" '
trial, task = '"$trial"', "'"$task"'"
numbers = [t["number"] for t in trials]
assert numbers == list(range(len(trials))), numbers
assert status["finished"] == status["n_trials"] == 4, status["counts"]
assert status["counts"]["RUNNING"] == 0 and status["counts"]["WAITING"] == 0, status["counts"]
cancelled = trials[trial]
assert cancelled["state"] == "FAIL" and cancelled["system_attrs"]["bfhpo:fail_reason"].startswith("preempted"), cancelled
copies = [t for t in trials if t["system_attrs"].get("bfhpo:requeued_from") == trial]
assert len(copies) == 1 and copies[0]["state"] in ("COMPLETE", "PRUNED"), copies
assert worker(copies[0])["array_task_id"] != task, worker(copies[0])
assert all(worker(t)["job_id"] == "'"$JOB"'" and worker(t)["array_task_id"] in ("0", "1", "2") and
           worker(t)["node"] == "'"$(hostname -s)"'" for t in trials), [worker(t) for t in trials]
print("cancelled task", task, "in trial", trial, "re-run as", copies[0]["number"])'
# Weights beside the study file, and no file or folder named after the URL (it holds the password).
[ -n "$(ls "$SHARED/tiny.json.weights"/trial-*.pt 2>/dev/null)" ] || fail "no weights beside the study: $(ls "$SHARED")"
[ -z "$(find "$PWD" "$SHARED" -maxdepth 3 -path "*$password*" 2>/dev/null)" ] ||
  fail "a path holds the password: $(find "$PWD" "$SHARED" -maxdepth 3 -path "*$password*" | head -3)"
for task_id in 0 1 2; do
  [ -s "$SHARED/tiny.slurm-${JOB}_$task_id.log" ] || fail "no log of task $task_id beside the study: $(ls "$SHARED")"
done
echo "slurm postgres array: all checks passed"
