# A study as a 2-task Slurm job array on a journal file (in a folder the nodes
# share). The script asks Slurm for SIGTERM to the batch shell before the
# time limit (--signal=B:TERM@grace) and execs bfhpo, so the signal reaches
# bfhpo: emulated here with `scancel --signal=TERM --batch`, which like B:
# signals the batch shell only, on the task running a trial. That trial
# becomes FAIL "preempted" and is re-queued; the other task trains it and
# finishes the study with n_trials finished trials and nothing RUNNING.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
require_slurm
STUDY="$SHARED/tiny.json"
write_training_study "$STUDY" 2 '"storage": "tiny.journal",
  "training": {"epochs": 60, "num_batches": 6, "batch_size": 8, "validation_sims": 8, "device": "cpu"}'

"$BFHPO" launch "$STUDY" --workers 2 --time 10:00 --grace 90 --dry-run > "$WORK/script" ||
  fail "launch --dry-run exited $?"
grep -qx -- "#SBATCH --signal=B:TERM@90" "$WORK/script" || fail "no time-limit signal: $(cat "$WORK/script")"
grep -qx -- "#SBATCH --time=10:00" "$WORK/script" || fail "no time limit: $(cat "$WORK/script")"
grep -qx -- "#SBATCH --array=0-1" "$WORK/script" || fail "not a 2-task array: $(cat "$WORK/script")"
grep -qx -- "exec '$(dirname "$BFHPO")/bfhpo' optimize '$STUDY'" "$WORK/script" ||
  fail "the script does not exec bfhpo optimize on the study: $(cat "$WORK/script")"
[ ! -e "$SHARED/tiny.sbatch" ] || fail "--dry-run wrote the script"

launch_array "$STUDY" 2 --time 10:00 --grace 90
wait_for_line "$SHARED/tiny.journal" '"intermediate_value"' 120
status_py "$STUDY" '
running = [t for t in trials if t["state"] == "RUNNING"]
assert running and worker(running[0]), trials
print(running[0]["number"], worker(running[0])["array_task_id"], worker(running[0])["job_id"], worker(running[0])["node"])' \
  > "$WORK/running"
read -r trial task job node < "$WORK/running"
[ "$job" = "$JOB" ] && [ "$node" = "$(hostname -s)" ] || fail "trial $trial names job $job on $node, not $JOB on $(hostname -s)"
"$BFHPO" status "$STUDY" > "$WORK/status.txt"
grep -qF "worker: slurm job ${JOB}_$task on node $node" "$WORK/status.txt" ||
  fail "status does not show the running trial's worker: $(cat "$WORK/status.txt")"

scancel --signal=TERM --batch "${JOB}_$task"
wait_for_job "${JOB}_$task" 60
wait_for_job "$JOB" 180
journal_py "$SHARED/tiny.journal" '
trial = int(args[0])
preempted = trials[trial]
assert preempted.state == TS.FAIL, preempted.state
assert preempted.system_attrs["bfhpo:fail_reason"].startswith("preempted"), preempted.system_attrs["bfhpo:fail_reason"]
copies = [t for t in trials if t.system_attrs.get("bfhpo:requeued_from") == trial]
assert len(copies) == 1 and copies[0].state in (TS.COMPLETE, TS.PRUNED), [(t.number, t.state) for t in trials]
assert copies[0].params == preempted.params
assert copies[0].system_attrs["bfhpo:worker"]["slurm"]["array_task_id"] != args[1], copies[0].system_attrs
assert not any(t.state in (TS.RUNNING, TS.WAITING) for t in trials), [(t.number, t.state) for t in trials]
finished = [t for t in trials if t.state in (TS.COMPLETE, TS.PRUNED)]
assert len(finished) == 2 and len(trials) == 3, [(t.number, t.state) for t in trials]
print("preempted trial", trial, "of task", args[1], "re-run as trial", copies[0].number)' "$trial" "$task"
grep -q "preempted" "$SHARED/tiny.slurm-${JOB}_$task.log" ||
  fail "the preempted task's log does not say so: $(tail -5 "$SHARED/tiny.slurm-${JOB}_$task.log")"
echo "slurm journal preempt: all checks passed"
