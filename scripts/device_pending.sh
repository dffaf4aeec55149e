#!/usr/bin/env bash
# The GPU measurements still owed (docs/results/README.md, "Not yet measured"), in one call of the
# device tool from the repository root, with the wheels in .whl/ (see agents/README.md):
#
#   run(command="bash scripts/device_pending.sh", carry=[".whl"], timeout_s=600)
#
# Each step has its own time limit and writes into $OUT as it goes, so a call cut short keeps
# what finished. What comes back (at most 8 files):
#   pending.log                 everything printed
#   harness.md                  judge wall time, cold + 4 warm (two spare workers)
#   gputests.log                the tests marked gpu (hostile candidates, timing, PTX capture)
#   resweep.md / resweep.json   the solutions that did not pass in the last sweep, judged again
#                               (default 5 trials per mode, 4 judges at once, perf off)
#   templates.json              knowledge_base.verify_templates: the templates checked and timed
# The worked example is a call of its own: scripts/device_worked_example.sh.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD || exit 1
export KERNFORGE_CACHE_DIR=/tmp/kfcache PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/pending_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/pending.log") 2>&1
SWEEPS=docs/results/solutions_sweep_h200_part1.json,docs/results/solutions_sweep_h200_part2.json

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@"
  echo "== $name: exit $? after $((SECONDS - t0)) s"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || echo "no nvidia-smi"
step harness 120 python3 -m benchmarks.harness_speed --device cuda --repeats 4 --out "$OUT/harness.md"
step gputests 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_judge_gpu.py tests/test_profiling_gpu.py \
  --timeout 120 -o addopts= > "$OUT/gputests.log" 2>&1
tail -3 "$OUT/gputests.log"
step resweep 200 python3 -m benchmarks.solutions_table --device cuda --no-perf --jobs 4 --failed-from "$SWEEPS" \
  --out "$OUT/resweep.md"
step templates 90 python3 -m knowledge_base.verify_templates --out "$OUT/templates.json"
