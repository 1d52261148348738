# scripts/quickstart shows the build's progress (it used to discard it and
# print nothing for minutes). A copy of scripts/ runs against a stub cmake
# that prints Ninja-style progress, a stub bfhpo and a stub python3.
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$WORK/root/build" "$WORK/bin"
cp -r "$SOURCE/scripts" "$WORK/root/"
mkdir "$WORK/root/studies"  # the study files, not what a run of the quickstart left here (studies/*.json.*)
find "$SOURCE/studies" -maxdepth 1 -type f ! -name '*.json.*' -exec cp {} "$WORK/root/studies/" \;
cat > "$WORK/bin/cmake" <<SH
#!/usr/bin/env bash
echo "\$*" >> "$WORK/cmake-calls"
case " \$* " in
  *" --build "*) echo "[1/2] Building CXX object trials/runner.cpp.o"; echo "[2/2] Linking CXX executable bfhpo" ;;
  *) echo "-- Configuring done" ;;
esac
SH
printf '#!/usr/bin/env bash\nexit 0\n' > "$WORK/root/build/bfhpo"
cp "$WORK/root/build/bfhpo" "$WORK/bin/python3"
chmod +x "$WORK/bin/cmake" "$WORK/root/build/bfhpo" "$WORK/bin/python3"
# scripts/setup only checks here: the test command installed everything first.
PATH="$WORK/bin:$PATH" bash "$WORK/root/scripts/quickstart" > "$WORK/out" 2>&1 || fail "quickstart failed: $(cat "$WORK/out")"
grep -qF "[1/2] Building CXX object trials/runner.cpp.o" "$WORK/out" || fail "no build progress shown: $(cat "$WORK/out")"
grep -qF "[2/2] Linking" "$WORK/out" || fail "the build's last step is not shown: $(cat "$WORK/out")"
# The quickstart builds only the two executables it runs; the test command builds the rest.
grep -q -- "--build build .*--target bfhpo\$" "$WORK/cmake-calls" || fail "quickstart builds more than bfhpo: $(cat "$WORK/cmake-calls")"
# The whole journey, each step with the command a user types next time.
for command in "optimize studies/quickstart.json" "export studies/quickstart.json --best" "train studies/quickstart.json --params" \
               "infer studies/quickstart.json.model --data studies/quickstart-responses.csv" "report studies/quickstart.json"; do
  grep -qF -- "$ build/bfhpo $command" "$WORK/out" || fail "the journey does not show 'bfhpo $command': $(cat "$WORK/out")"
done
echo "quickstart progress: all checks passed"
