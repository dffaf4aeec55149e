#!/usr/bin/env bash
# session 21 diagnostics on the GPU machine: first-call cost of compiled-ahead attention configs; ncu's view
set -u
OUT=${OUT:-/tmp/diag_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
timeout 200 python3 scripts/diag/first_call.py > "$OUT/first_call.log" 2>&1; echo "first_call rc $?"
which ncu; ncu --version | tail -1
for reps in 20 200; do
  t0=$(date +%s%N)
  timeout 120 ncu --metrics gpu__time_duration.sum --csv --print-kernel-base function --target-processes all python3 scripts/diag/ncu_probe.py $reps > "$OUT/ncu_$reps.csv" 2> "$OUT/ncu_$reps.err"; rc=$?
  t1=$(date +%s%N); echo "ncu reps=$reps rc=$rc wall $(( (t1 - t0) / 1000000 )) ms"
  t0=$(date +%s%N); python3 scripts/diag/ncu_probe.py $reps; t1=$(date +%s%N); echo "plain reps=$reps wall $(( (t1 - t0) / 1000000 )) ms"
done
head -c 3000 "$OUT/ncu_20.csv"; tail -c 1500 "$OUT/ncu_20.err"
grep -v "^==PROF==" "$OUT/first_call.log" | tail -60
