# bfhpo report on a tiny real study: a self-contained page whose plots hold
# one mark per trial, that headless Chromium renders without console messages
# into a screenshot that is not blank; and what optuna-dashboard reads (the
# metric name, readable user attributes) as Optuna 3.1 reads it back.
source "$(dirname "$0")/lib.sh"
STUDY="$WORK/tiny.json"
write_training_study "$STUDY" 8 '"pruner": {"type": "median", "n_startup_trials": 4, "n_warmup_steps": 0},
 "memory": {"budget_mb": 64}'

"$BFHPO" optimize "$STUDY" > "$WORK/optimize.out" 2> "$WORK/optimize.err" ||
  fail "optimize exited $?: $(tail -5 "$WORK/optimize.err")"
grep -q "memory gate: " "$WORK/optimize.out" || fail "no gate line in the summary: $(cat "$WORK/optimize.out")"
grep -q "peak memory: measured .* x the estimate" "$WORK/optimize.out" || fail "no peak line: $(cat "$WORK/optimize.out")"
"$BFHPO" report "$STUDY" -o "$WORK/report.html" > "$WORK/report.out" || fail "report exited $?"
[ -s "$WORK/report.html" ] || fail "no report written"

journal_py "$STUDY.journal" '
import re
html = open(args[0] + "/report.html").read()
complete = [t for t in trials if t.state == TS.COMPLETE]
assert complete, "no COMPLETE trial"
# Optuna 3.1 has no set_metric_names; later Optunas read this study system attribute.
assert study.system_attrs["study:metric_names"] == ["val_nll"], study.system_attrs
for t in complete:
    ua = t.user_attrs
    for key in ("duration_s", "estimated_peak_mb", "measured_peak_mb", "trained_batch_size",
                "trained_item_chunk_size", "memory_gate", "log_a.calibration_error", "b.correlation"):
        assert key in ua, (t.number, key, sorted(ua))
    assert ua["trained_batch_size"] == t.system_attrs["bfhpo:batch_size"], ua
    assert "diagnostics" not in ua, "the diagnostics blob belongs in system attributes"
for t in trials:
    if t.state != TS.COMPLETE:
        assert t.user_attrs["reason"] == t.system_attrs["bfhpo:fail_reason"], t.user_attrs
# One history point per COMPLETE trial, each naming its trial.
points = re.findall(r"<circle class=\"history-point\"[^>]*data-trial=\"(\d+)\"", html)
assert sorted(map(int, points)) == sorted(t.number for t in complete), (points, [t.number for t in complete])
assert len(re.findall(r"<polyline class=\"curve ", html)) == sum(1 for t in trials if t.intermediate_values)
assert len(re.findall(r"<rect class=\"time-bar ", html)) == len(trials)
assert len(re.findall(r"<circle class=\"measured\"", html)) == len(trials) - sum(
    1 for t in trials if t.system_attrs.get("bfhpo:gate", {}).get("decision") == "pruned")
assert len(re.findall(r"<polyline class=\"ecdf\"", html)) == 2, "no diagnostics plots for the best trial"
# The pruner starts after 4 COMPLETE trials, enough for importance: one bar per parameter.
assert len(complete) >= 4, "the pruner waits for 4 COMPLETE trials"
assert len(re.findall(r"<rect class=\"importance\"", html)) == len(study.best_trial.params), "no importance bars"
# Self-contained: no script, nothing fetched (no URL but the SVG namespace, no src, only #fragment links).
assert "<script" not in html and len(re.findall(r"https?://", html)) == html.count("xmlns=\"http://www.w3.org/2000/svg\"")
assert not re.search(r"\bsrc\s*=|href\s*=\s*[\"\x27]?[^#\"\x27]|url\(\s*[\"\x27]?[^#\"\x27\s]|@import", html), "a reference outside the page"
print("report: points match", len(complete), "COMPLETE trials")
' "$WORK"

# The memory frontier: status --json's levels and export --best --budget-mb give the best COMPLETE
# trial whose peak (measured when it trained, else estimated) fits, as computed here from what Optuna reads.
journal_py "$STUDY.journal" '
peaks = {}
for t in trials:
    a = t.system_attrs
    if t.state == TS.COMPLETE and t.value is not None:
        launched = "bfhpo:batch_size" in a or a.get("bfhpo:oom_history")
        peaks[t.number] = (t.value, a["bfhpo:measured_peak_mb"] if launched else a["bfhpo:estimated_peak_mb"])
ordered = sorted(p for _, p in peaks.values())
low, middle = ordered[0] / 2, ordered[len(ordered) // 2]
def best_within(mb):
    fits = [(v, p, n) for n, (v, p) in peaks.items() if p <= mb]
    return min(fits)[2] if fits else None
open(args[0] + "/levels", "w").write(f"{low / 1024},{middle / 1024}\n{middle!r}\n{low!r}\n")
open(args[0] + "/expected", "w").write(json.dumps([None, best_within(middle)]))
' "$WORK"
levels=$(sed -n 1p "$WORK/levels"); middle=$(sed -n 2p "$WORK/levels"); low=$(sed -n 3p "$WORK/levels")
"$BFHPO" status "$STUDY" --json --memory-levels "$levels" > "$WORK/status.json" || fail "status --json exited $?"
"$OPTUNA_PYTHON" -c '
import json, sys
status, expected = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [row["trial"] for row in status["memory_frontier"]] == expected, (status["memory_frontier"], expected)' \
  "$WORK/status.json" "$WORK/expected" || fail "status --json's memory frontier is not the best that fits"
"$BFHPO" status "$STUDY" --memory-levels "$levels" | grep -q "none fits" || fail "status shows no frontier"
"$BFHPO" export "$STUDY" --best --budget-mb "$middle" > "$WORK/best-within.json" || fail "export --budget-mb exited $?"
"$OPTUNA_PYTHON" -c '
import json, sys
best, expected = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert best["trial"] == expected[1] and "config" in best and "weights" in best, (best["trial"], expected)' \
  "$WORK/best-within.json" "$WORK/expected" || fail "export --best --budget-mb chose another trial"
expect_user_error "no COMPLETE trial fits" "$BFHPO" export "$STUDY" --best --budget-mb "$low"
expect_user_error "it needs --best" "$BFHPO" export "$STUDY" --budget-mb 100
expect_user_error "is not a memory size in GB" "$BFHPO" status "$STUDY" --memory-levels 8,big
[ "$(grep -c 'class="frontier-row"' "$WORK/report.html")" -eq 5 ] || fail "the report's frontier table lacks its 5 sizes"

# Headless Chromium: console messages are logged as ":CONSOLE"; the sentinel
# page proves this check sees them.
shoot() {  # shoot PAGE PNG LOG
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,3000 \
    --screenshot="$2" --enable-logging=stderr --v=0 "file://$1" > /dev/null 2> "$3" || fail "chromium exited $?: $(tail -3 "$3")"
}
echo '<html><body><script>console.error("sentinel")</script></body></html>' > "$WORK/sentinel.html"
shoot "$WORK/sentinel.html" "$WORK/sentinel.png" "$WORK/sentinel.log"
grep -q ':CONSOLE.*sentinel' "$WORK/sentinel.log" || fail "chromium's console is not visible to this test"
shoot "$WORK/report.html" "$WORK/report.png" "$WORK/chromium.log"
! grep -E ':CONSOLE|Uncaught' "$WORK/chromium.log" || fail "console messages while rendering the report"
# Not blank, and the plots drawn: their series colour (#2f6fd0, COMPLETE trials,
# memory and diagnostics marks) covers at least 0.2% of the page.
"$OPTUNA_PYTHON" "$(dirname "$0")/screenshot_check.py" "$WORK/report.png" 0.05 2f6fd0:0.002 ||
  fail "the screenshot is blank or shows no plot"
echo "report: all checks passed"
