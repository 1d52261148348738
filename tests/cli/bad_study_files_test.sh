# Malformed study files, one a line of a table, and files that are not study
# files: each exits 2 with one message naming the file, the field and the fix,
# and writes nothing.
source "$(dirname "$0")/lib.sh"

# The table: one malformed study file a line, VERB|NEEDLE|KIND|TEXT. KIND raw:
# TEXT is the whole file ($S expands to a valid one-float search space); KIND
# train: TEXT replaces top-level members of a valid tiny training study
# (write_training_study). Each must exit 2 with NEEDLE, the file's path and a
# fix, and write no journal.
S='"search_space": {"x": {"type": "float", "low": 0, "high": 1}}'
T='"training": {"num_batches": 3, "batch_size": 8, "validation_sims": 8, "device": "cpu"'  # + "epochs"..}
while IFS='|' read -r verb needle kind text; do
  [ -n "$verb" ] && [ "${verb:0:1}" != "#" ] || continue
  n=$((${n:-0} + 1))
  file="$WORK/case$n.json"
  text="${text//\$S/$S}"
  text="${text//\$T/$T}"
  if [ "$kind" = raw ]; then printf '%s' "$text" > "$file"; else write_training_study "$file" 2 "$text"; fi
  expect_user_error "$needle" "$BFHPO" "$verb" "$file"
  grep -qF "$file" "$WORK/err" || fail "case $n ($needle): the message does not name the file: $(cat "$WORK/err")"
  [ ! -e "$file.journal" ] || fail "case $n ($needle) wrote a journal"
done <<'TABLE'
# syntax, shape and the reader's own checks
ask|field 'name'|raw|{$S}
ask|field 'name': expected a non-empty string|raw|{"name": "", $S}
ask|field 'name': expected a non-empty string, got a number|raw|{"name": 7, $S}
ask|not valid JSON|raw|{"name": "s", 
ask|not valid JSON|raw|
ask|not valid JSON|raw|{"name": "s", $S} trailing
ask|not valid JSON|raw|{"name": "s", "n_trials": NaN, $S}
ask|expected an object {...}, got a list|raw|[{"name": "s"}]
ask|field 'name': given twice|raw|{"name": "s", "name": "t", $S}
ask|field 'search_space.x.low': given twice|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "low": 0.5, "high": 1}}}
ask|field 'n_trials': unreadable value|raw|{"name": "s", "n_trials": 1e400, $S}
ask|field 'search_space.x.high': unreadable value|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1e999}}}
# unknown keys anywhere, with the closest valid key
ask|did you mean 'n_trials'|raw|{"name": "s", "n_trails": 5, $S}
optimize|did you mean 'memory'|train|"memroy": {"budget_mb": 64}
optimize|did you mean 'simulator'|train|"simulater": {"model": "2pl"}
ask|did you mean 'pruner.n_warmup_steps'|raw|{"name": "s", "pruner": {"type": "median", "n_warmup_step": 2}, $S}
ask|field 'pruner.min_resource': unknown key|raw|{"name": "s", "pruner": {"type": "median", "min_resource": 2}, $S}
ask|field 'sampler.n_startup_trials': unknown key|raw|{"name": "s", "sampler": {"type": "random", "n_startup_trials": 2}, $S}
ask|did you mean 'sampler.n_startup_trials'|raw|{"name": "s", "sampler": {"type": "tpe", "n_startup_trails": 5}, $S}
ask|did you mean 'search_space.x.step'|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1, "stp": 0.1}}}
optimize|did you mean 'training.epochs'|train|$T, "epocs": 2}
optimize|did you mean 'memory.oom_retry.min_batch_size'|train|"memory": {"oom_retry": {"min_batch": 2}}
optimize|did you mean 'objective.calibration_error'|train|"objective": {"val_nll": 1, "calibration_eror": 2}
optimize|did you mean 'simulator.n_items'|train|"simulator": {"n_item": [6, 8]}
optimize|did you mean 'flow.depth'|train|"search_space": {"flow.dept": {"type": "int", "low": 1, "high": 3}}
# values: types, ranges, no silent truncation
ask|field 'n_trials': must be an integer in [1, 2147483647], got 3000000000|raw|{"name": "s", "n_trials": 3000000000, $S}
ask|field 'n_trials': must be an integer in [1, 2147483647]|raw|{"name": "s", "n_trials": 4294967297, $S}
ask|field 'n_trials': must be an integer in [1, 2147483647]|raw|{"name": "s", "n_trials": 3e9, $S}
ask|field 'n_trials': must be a whole number|raw|{"name": "s", "n_trials": 2.5, $S}
ask|field 'n_trials': expected an integer, got a string|raw|{"name": "s", "n_trials": "10", $S}
ask|field 'sampler.n_startup_trials': must be an integer in [0, 2147483647]|raw|{"name": "s", "sampler": {"type": "tpe", "n_startup_trials": 4294967296}, $S}
ask|field 'pruner.n_warmup_steps': must be an integer in [0, 2147483647]|raw|{"name": "s", "pruner": {"type": "median", "n_warmup_steps": -1}, $S}
ask|field 'seed': must be an integer in [0,|raw|{"name": "s", "seed": -1, $S}
ask|field 'timeout_s': must be a positive number|raw|{"name": "s", "timeout_s": -5, $S}
ask|field 'timeout_s': expected a number, got a string|raw|{"name": "s", "timeout_s": "1h", $S}
ask|did you mean "minimize"|raw|{"name": "s", "direction": "Minimize", $S}
ask|did you mean "tpe"|raw|{"name": "s", "sampler": {"type": "tpee"}, $S}
ask|field 'pruner.type': missing|raw|{"name": "s", "pruner": {"n_warmup_steps": 2}, $S}
ask|use "bfhpo" or "optuna"|raw|{"name": "s", "sampler": {"type": "tpe", "preset": "optuna3"}, $S}
ask|field 'sampler.multivariate': expected true or false, got a string|raw|{"name": "s", "sampler": {"type": "tpe", "multivariate": "yes"}, $S}
ask|field 'storage': expected a non-empty string|raw|{"name": "s", "storage": "", $S}
# the search space
ask|field 'search_space': missing or empty; `bfhpo ask`|raw|{"name": "s"}
ask|field 'search_space': missing or empty|raw|{"name": "s", "search_space": {}}
ask|field 'search_space': expected an object|raw|{"name": "s", "search_space": [1]}
ask|field 'search_space.x': expected an object|raw|{"name": "s", "search_space": {"x": 5}}
ask|field 'search_space.x.type': unknown value "gaussian"|raw|{"name": "s", "search_space": {"x": {"type": "gaussian", "low": 0, "high": 1}}}
ask|search_space.x.low|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 2, "high": 1}}}
ask|log-scaled|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1, "log": true}}}
ask|field 'search_space.x.log': expected true or false|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 1, "high": 2, "log": "yes"}}}
ask|Optuna would shrink high to 0.9|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1, "step": 0.3}}}
ask|step 2 exceeds the range [0, 1]|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1, "step": 2}}}
ask|Optuna would shrink high to 9|raw|{"name": "s", "search_space": {"x": {"type": "int", "low": 0, "high": 10, "step": 3}}}
ask|field 'search_space.x.low': must be a whole number|raw|{"name": "s", "search_space": {"x": {"type": "int", "low": 1.5, "high": 4}}}
ask|field 'search_space.x.high': must be an integer in|raw|{"name": "s", "search_space": {"x": {"type": "int", "low": 1, "high": 1e17}}}
ask|field 'search_space.x.choices': missing or empty|raw|{"name": "s", "search_space": {"x": {"type": "categorical", "choices": []}}}
ask|duplicate choice|raw|{"name": "s", "search_space": {"x": {"type": "categorical", "choices": ["a", "a"]}}}
ask|search_space.h.when|raw|{"name": "s", "search_space": {"h": {"type": "int", "low": 1, "high": 3, "when": {"ghost": 1}}}}
ask|'x' is a continuous float|raw|{"name": "s", "search_space": {"x": {"type": "float", "low": 0, "high": 1}, "h": {"type": "int", "low": 1, "high": 3, "when": {"x": 0.5}}}}
ask|value 9 is not a value of 'n'|raw|{"name": "s", "search_space": {"n": {"type": "int", "low": 1, "high": 3}, "h": {"type": "int", "low": 1, "high": 3, "when": {"n": 9}}}}
ask|value "c" is not a value of 'k'|raw|{"name": "s", "search_space": {"k": {"type": "categorical", "choices": ["a", "b"]}, "h": {"type": "int", "low": 1, "high": 3, "when": {"k": "c"}}}}
# training sections
optimize|field 'objective.val_nll': expected a number, got a string|train|"objective": {"val_nll": "x"}
optimize|field 'objective': weights must be >= 0 and not all zero|train|"objective": {"val_nll": 0}
optimize|unknown objective "loss"|train|"objective": "loss"
optimize|field 'training.epochs': must be an integer in [1, 2147483647], got 3000000000|train|$T, "epochs": 3000000000}
optimize|field 'training.num_batches': must be an integer in [1, 2147483647], got 5000000001|train|$T, "epochs": 2, "num_batches": 5000000001}
optimize|exceeds 2147483647 steps|train|"training": {"epochs": 100000, "num_batches": 100000, "device": "cpu"}
optimize|field 'training.clip_grad_norm': must be >= 0|train|$T, "clip_grad_norm": -1}
optimize|field 'training.learning_rate': must be positive|train|$T, "learning_rate": 0}
optimize|field 'training.warmup_fraction': must be in [0, 1)|train|$T, "warmup_fraction": 1}
optimize|field 'training.device': unknown device|train|$T, "device": "gpu"}
optimize|field 'memory.oom_retry.min_batch_size': 16 exceeds training.batch_size 8|train|"memory": {"oom_retry": {"min_batch_size": 16}}
optimize|field 'memory.oom_retry.item_chunk_ladder': is empty|train|"memory": {"oom_retry": {"item_chunk_ladder": []}}
optimize|field 'memory.oom_retry.item_chunk_ladder': expected strictly decreasing|train|"memory": {"oom_retry": {"item_chunk_ladder": [4, 8]}}
optimize|field 'memory.oom_retry.item_chunk_ladder[1]': must be an integer in [1,|train|"memory": {"oom_retry": {"item_chunk_ladder": [4, 0]}}
optimize|field 'memory.oom_retry.backoff_factor': must be > 1|train|"memory": {"oom_retry": {"backoff_factor": 1}}
optimize|field 'memory.auto_fraction': must be in (0, 1]|train|"memory": {"budget_mb": "auto", "auto_fraction": 1.5}
optimize|field 'memory.budget_mb': expected a number of MB or "auto"|train|"memory": {"budget_mb": "lots"}
optimize|memory.budget_mb|train|"memory": {"budget_mb": -5}
optimize|field 'memory.gate': expected true or false, got a string|train|"memory": {"gate": "yes"}
optimize|field 'simulator.n_items': low > high|train|"simulator": {"model": "2pl", "n_items": [50, 10]}
optimize|field 'simulator.n_items[0]': must be an integer in [1,|train|"simulator": {"model": "2pl", "n_items": [0, 10]}
optimize|field 'simulator.model': unknown value "3p1". Fix: did you mean "3pl"? (use "rasch", "2pl", "3pl" or "grm")|train|"simulator": {"model": "3p1"}
optimize|field 'simulator.n_categories': the graded response model needs its number of categories|train|"simulator": {"model": "grm"}
optimize|field 'simulator.n_categories': must be an integer in [2, 100], got 1|train|"simulator": {"model": "grm", "n_categories": 1}
optimize|field 'simulator.missing': a missing rate must be in [0, 1), got 1|train|"simulator": {"missing": 1}
optimize|field 'simulator.missing[0]': a missing rate must be in [0, 1), got -0.1|train|"simulator": {"missing": [-0.1, 0.2]}
optimize|field 'simulator.priors.c.beta': a Beta prior's parameters must be positive|train|"simulator": {"model": "3pl", "priors": {"c": {"beta": 0}}}
optimize|field 'simulator.priors.b.sd': must be positive|train|"simulator": {"model": "rasch", "priors": {"b": {"sd": -1}}}
optimize|field 'approximator.param_dim': model "grm" has 4|train|"simulator": {"model": "grm", "n_categories": 4}, "approximator": {"param_dim": 2}
optimize|field 'summary.embed_dim': must be an integer in|train|"approximator": {"summary.embed_dim": 1e30}
optimize|field 'flow.depth': must be a whole number|train|"approximator": {"flow.depth": 2.5}
optimize|field 'approximator': expected an object|train|"approximator": [1]
optimize|search_space.training.epochs value 3000000000|train|"search_space": {"training.epochs": {"type": "int", "low": 1, "high": 3000000000}}
optimize|field 'flow.depth': must be a whole number|train|"search_space": {"flow.depth": {"type": "float", "low": 1, "high": 3}}
optimize|search_space.training.batch_size value "a"|train|"search_space": {"training.batch_size": {"type": "categorical", "choices": [8, "a"]}}
optimize|field 'memory.oom_retry.min_batch_size': 64 exceeds the largest searched training.batch_size 32|train|"memory": {"oom_retry": {"min_batch_size": 64}}, "search_space": {"training.batch_size": {"type": "int", "low": 8, "high": 32}}
TABLE
[ "$n" -ge 80 ] || fail "the table ran only $n cases"

# Files that are not study files: deep nesting, a directory, a missing path, a path through a file.
printf '{"name": "s", "x": %s1%s}' "$(printf '[%.0s' $(seq 100000))" "$(printf ']%.0s' $(seq 100000))" > "$WORK/deep.json"
expect_user_error "nested deeper than" "$BFHPO" ask "$WORK/deep.json"
mkdir "$WORK/dir.json"
expect_user_error "the study file is a directory" "$BFHPO" ask "$WORK/dir.json"
# A device never ends a read, a FIFO may wait for its writer forever: each refused before reading
# (timeout: the old reader hung); a pipe is read (`--params <(...)`, tests/cli/optimize_memory_gate_test).
mkfifo "$WORK/fifo.json"
expect_user_error "fifo.json: the study file is a FIFO" timeout 20 "$BFHPO" ask "$WORK/fifo.json"
expect_user_error "the study file is a device" timeout 20 "$BFHPO" ask /dev/zero
printf '{"name": "de\\u0000mo", "search_space": {"x": {"type": "float", "low": 0, "high": 1}}}' > "$WORK/nul.json"
expect_user_error "field 'name': holds a control character" "$BFHPO" ask "$WORK/nul.json"
[ ! -e "$WORK/nul.json.journal" ] || fail "a study named with a NUL created a journal"
expect_user_error "No such file or directory" "$BFHPO" ask "$WORK/missing.json"
expect_user_error "Not a directory" "$BFHPO" ask "$WORK/case1.json/study.json"
if [ "$(id -u)" != 0 ]; then  # root reads any file
  printf '{}' > "$WORK/locked.json"; chmod 000 "$WORK/locked.json"
  expect_user_error "Permission denied" "$BFHPO" ask "$WORK/locked.json"
fi
write_study "$WORK/params_study.json" 5
printf '{"name": "s"}' > "$WORK/no_space.json"
printf '{}' > "$WORK/no_params.json"
expect_user_error "field 'search_space': missing or empty; \`bfhpo enqueue\`" "$BFHPO" enqueue "$WORK/no_space.json" \
  --params "$WORK/no_params.json"
[ ! -e "$WORK/no_space.json.journal" ] || fail "enqueue without a search space wrote a journal"
printf '{"lr": 0.01, "lr": 0.02}' > "$WORK/dup_params.json"
expect_user_error "field 'lr': given twice" "$BFHPO" enqueue "$WORK/params_study.json" --params "$WORK/dup_params.json"
[ ! -e "$WORK/params_study.json.journal" ] || fail "a bad params file wrote a journal"

