# Shared helpers of the CLI tests: a scratch folder, a study file, assertions.
set -euo pipefail
BFHPO="$1"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
OPTUNA_PYTHON=/usr/bin/python3  # Debian's python3 with python3-optuna

fail() { echo "FAIL: $*" >&2; exit 1; }

write_study() {  # write_study FILE [N_TRIALS]
  cat > "$1" <<JSON
{"name": "demo", "direction": "minimize", "n_trials": ${2:-20}, "seed": 1,
 "sampler": {"type": "tpe"},
 "search_space": {
   "lr":    {"type": "float", "low": 1e-4, "high": 1e-1, "log": true},
   "depth": {"type": "int", "low": 2, "high": 8},
   "kind":  {"type": "categorical", "choices": ["a", "b"]},
   "heads": {"type": "int", "low": 1, "high": 8, "when": {"kind": "b"}}}}
JSON
}

# objective PARAMS_JSON -> a value that depends on every parameter
objective() {
  "$OPTUNA_PYTHON" -c '
import json, math, sys
p = json.loads(sys.argv[1])["params"]
v = (math.log10(p["lr"]) + 2.5) ** 2 + (p["depth"] - 5) ** 2 / 10 + (0.5 if p["kind"] == "a" else 0.1 * abs(p.get("heads", 4) - 4))
print(v)' "$1"
}
