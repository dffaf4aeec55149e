#!/usr/bin/env bash
# The offline policy on the KernelBench- and TritonBench-style form files of the tests, as a user
# runs it: `kernforge run` per file, hidden provenance, CPU interpreter, a small iteration budget.
# Prints one markdown row per file (solved: the run found a correct kernel, exit 0) and a total.
#
#   bash scripts/offline_public_forms.sh [REPO] [ITERATIONS]
#
# REPO (default .): the checkout whose code runs (another commit's tree measures "before" on the
# same files, which are read from this checkout). Runs go to a temporary folder.
set -u
REPO=$(cd "${1:-.}" && pwd)
ITERATIONS=${2:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python}
RUNS=$(mktemp -d)
solved=0
total=0
echo "| form | solved | seconds |"
echo "|---|---|---|"
for f in "$HERE"/tests/fixtures/kernelbench_forms/*.py "$HERE"/tests/fixtures/tritonbench_forms/*.py; do
  name="$(basename "$(dirname "$f")")/$(basename "$f" .py)"
  start=$(date +%s)
  (cd "$REPO" && PYTHONPATH="$REPO" "$PY" -m agents.cli run --task "$f" --llm offline \
    --method offline --device cpu --benchmark --iterations "$ITERATIONS" --quiet \
    --runs-dir "$RUNS" >/dev/null 2>&1)
  rc=$?
  took=$(( $(date +%s) - start ))
  total=$((total + 1))
  if [ "$rc" -eq 0 ]; then solved=$((solved + 1)); mark=yes; else mark="no (exit $rc)"; fi
  echo "| $name | $mark | $took |"
done
echo
echo "solved $solved of $total"
rm -rf "$RUNS"
