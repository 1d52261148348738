"""Where a training study's time goes, read from its journal with Optuna.

    bash scripts/quickstart
    /usr/bin/python3 bench/trial_overhead.py studies/quickstart.json.journal

For every trial: wall seconds (ask + trial), time in training steps, in
validation passes and in the posterior diagnostics, and the engine's overhead
(everything else: the sampler's ask, the memory gate, building the network,
journal writes, saving weights) as a share of the trial's time. Then the
fraction of all trial time spent on trials that ended in an OOM failure
(target: 0 -- the gate and the backoff ladder exist so that no time is lost).
"""
import statistics
import sys

import optuna


def main(journal):
    storage = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(journal))
    summaries = optuna.get_all_study_summaries(storage)
    rows, oom_seconds, total_seconds = [], 0.0, 0.0
    for summary in summaries:
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        for t in study.get_trials(deepcopy=False):
            a = t.system_attrs
            if "bfhpo:seconds" not in a:
                continue
            wall = a["bfhpo:seconds"] + a.get("bfhpo:ask_seconds", 0.0)
            steps = a.get("bfhpo:step_seconds", 0.0)
            validation = a.get("bfhpo:validation_seconds", 0.0) + a.get("bfhpo:diagnostics_seconds", 0.0)
            overhead = wall - steps - validation
            total_seconds += wall
            if t.state == optuna.trial.TrialState.FAIL and str(a.get("bfhpo:fail_reason", "")).startswith("oom"):
                oom_seconds += wall
            rows.append((t.number, t.state.name, wall, steps, validation, overhead))
    print(f"{'trial':>5} {'state':>9} {'wall s':>8} {'steps s':>8} {'eval s':>8} {'engine s':>9} {'engine %':>9}")
    for number, state, wall, steps, validation, overhead in rows:
        print(f"{number:>5} {state:>9} {wall:8.2f} {steps:8.2f} {validation:8.2f} {overhead:9.3f} "
              f"{100 * overhead / wall:8.1f}%")
    trained = [r for r in rows if r[3] > 0]
    if trained:
        shares = [r[5] / r[2] for r in trained]
        print(f"\ntrained trials: {len(trained)}; engine overhead median {100 * statistics.median(shares):.1f}% "
              f"of a trial (max {100 * max(shares):.1f}%), {sum(r[5] for r in trained):.2f} s in all "
              f"vs {sum(r[3] for r in trained):.1f} s in training steps")
    gated = [r for r in rows if r[3] == 0]
    if gated:
        print(f"trials decided without training (memory gate): {len(gated)}, "
              f"median {statistics.median(r[2] for r in gated) * 1000:.1f} ms each")
    print(f"time on trials that ended in an OOM failure: {oom_seconds:.2f} s of {total_seconds:.1f} s "
          f"({100 * oom_seconds / max(total_seconds, 1e-9):.2f}%, target 0)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
