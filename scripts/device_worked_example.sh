#!/usr/bin/env bash
# The worked example (docs/worked_example/) on the GPU machine, in one call of the device tool:
#
#   run(command="bash scripts/device_worked_example.sh", carry=[".whl"], timeout_s=600)
#
# Put KERNFORGE_CODE_REVISION=<this checkout's `git rev-parse HEAD`> before the command: the GPU
# machine's copy of the tree can carry an older .git, and the README then names the stated
# revision (and says it was stated) instead of the copy's.
#
# from the repository root, with the wheels of the packages the machine lacks in .whl/ (langgraph,
# langchain-core, pydantic, openai, anthropic, tenacity, ...; see agents/README.md). Extra
# arguments go to `python -m agents.bench.worked_example` (e.g. --tasks 8, --iterations 3). Its default,
# the first 3 lite tasks x 5 methods, is estimated at ~6 min of H200 time (agents/bench/worked_example.py
# says how). The whole lite suite (--tasks 0) took 1302 s of wall time with --workers 2 on two
# H200s (2026-11-29): three calls, each resuming the last.
#
# To continue an example in a later call, put what an earlier call returned into .carry/ (git
# ignores it) and carry it: run(..., carry=[".whl", ".carry"]). worked_example.tgz (the out
# folder) and worked_example_runs.tgz[.partNN] (its runs) are unpacked first, replacing the
# checkout's out folder; WORKED_EXAMPLE_FRESH=1 starts a new example instead (removes the folder).
# With two GPUs, `--workers 2` runs two runs at once, one per GPU (kernforge bench --workers).
#
# The example gets WORKED_EXAMPLE_LIMIT seconds (default 510) and starts no run in its last 150;
# at the limit it is interrupted (SIGINT) and still writes its report, so the whole call ends
# inside the tool's 600 s. What comes back in $OUT:
#   worked_example.log              everything it printed
#   worked_example.tgz              the out folder without bench/runs/: README, report, plots, pairs,
#                                   rows, replay script (what docs/worked_example/ commits)
#   worked_example_runs.tgz[.partNN] bench/runs/ (every run directory, for resuming in a later call:
#                                   unpack it into the checkout and carry docs/worked_example/bench/runs)
#   kfcache.tgz                     the baseline times and device peaks it measured or reused: put it in
#                                   .carry/ and a later call reuses them (cached baselines, issue 15)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD || exit 1
export KERNFORGE_CACHE_DIR=/tmp/kfcache PYTHONUNBUFFERED=1
# the bubblewrap scripts/device_check.sh carries (.carry/bwrap): candidates isolated on the GPU too
[ -x .carry/bwrap/bwrap ] && export PATH=$PWD/.carry/bwrap:$PATH
# baseline times and device peaks measured by an earlier call (its kfcache.tgz, put in .carry/):
# reused where their keys still match (task content, device, versions, measuring code)
if [ -f .carry/kfcache.tgz ]; then
  mkdir -p "$KERNFORGE_CACHE_DIR" && tar xzf .carry/kfcache.tgz -C "$KERNFORGE_CACHE_DIR" \
    && echo "baseline and peak cache from .carry/kfcache.tgz: $(find "$KERNFORGE_CACHE_DIR" -type f | wc -l) file(s)"
fi
DIR=${WORKED_EXAMPLE_DIR:-docs/worked_example}
LIMIT=${WORKED_EXAMPLE_LIMIT:-510}
DEVICE=${WORKED_EXAMPLE_DEVICE:-cuda}   # cpu: try the script without a GPU
OUT=${OUT:-/tmp/worked_example_out}
mkdir -p "$OUT"
if [ "${WORKED_EXAMPLE_FRESH:-0}" = 1 ]; then
  rm -rf "$DIR"
elif [ -f .carry/worked_example.tgz ]; then
  rm -rf "$DIR" && tar xzf .carry/worked_example.tgz || exit 1
  if ls .carry/worked_example_runs.tgz* >/dev/null 2>&1; then
    cat .carry/worked_example_runs.tgz* | tar xz || exit 1
  fi
  echo "continuing the example unpacked from .carry/ ($(ls "$DIR/bench/runs" 2>/dev/null | wc -l) runs)"
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"; } \
  2>&1 | tee "$OUT/worked_example.log"
timeout -k 20 -s INT "$LIMIT" python3 -m agents.bench.worked_example --device "$DEVICE" --out "$DIR" \
  --deadline $((LIMIT - 150)) "$@" 2>&1 | tee -a "$OUT/worked_example.log"
rc=${PIPESTATUS[0]}
tar czf "$OUT/worked_example.tgz" --exclude="$DIR/bench/runs" "$DIR"
[ -d "$KERNFORGE_CACHE_DIR" ] && tar czf "$OUT/kfcache.tgz" -C "$KERNFORGE_CACHE_DIR" .
if [ -d "$DIR/bench/runs" ]; then
  tar czf "$OUT/worked_example_runs.tgz" "$DIR/bench/runs"
  # the device tool returns files of at most 16 MiB
  if [ "$(stat -c %s "$OUT/worked_example_runs.tgz")" -gt $((15 * 1024 * 1024)) ]; then
    split -b 15M -d "$OUT/worked_example_runs.tgz" "$OUT/worked_example_runs.tgz.part" \
      && rm "$OUT/worked_example_runs.tgz"
  fi
fi
ls -la "$OUT"
echo "worked example exit status $rc (0 done or deferred: see README.md; 1 a run stopped on an error; 124 interrupted at the limit)"
exit "$rc"
