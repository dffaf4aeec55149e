#!/usr/bin/env bash
# Build the launch observer (benchmarks/harness/observer/kf_observer.c): a CUPTI callback
# library the judge loads into candidates' workers on a GPU. Needs a C compiler and the CUDA
# toolkit's CUPTI headers and library (found under $CUDA_HOME, /usr/local/cuda, or the
# nvidia-cuda-cupti wheel of the active Python). Writes build/observer/libkf_observer.so
# (the judge's default; KERNFORGE_OBSERVER_LIB names another). Without CUPTI it says so and
# exits 1: the judge then runs unobserved and says so in every GPU verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/observer
mkdir -p "$out"
py=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
roots=()
[ -n "${CUDA_HOME:-}" ] && roots+=("$CUDA_HOME/extras/CUPTI" "$CUDA_HOME")
roots+=(/usr/local/cuda/extras/CUPTI /usr/local/cuda)
wheel=$("$py" -c 'import nvidia.cuda_cupti, os; print(os.path.dirname(nvidia.cuda_cupti.__file__))' 2>/dev/null || true)
[ -n "$wheel" ] && roots+=("$wheel")
inc="" lib=""
for r in "${roots[@]}"; do
  [ -z "$inc" ] && [ -f "$r/include/cupti.h" ] && inc="$r/include"
  if [ -z "$lib" ]; then
    for d in "$r/lib64" "$r/lib" "$r/targets/x86_64-linux/lib"; do
      if ls "$d"/libcupti.so* >/dev/null 2>&1; then lib="$d"; break; fi
    done
  fi
done
if [ -z "$inc" ] || [ -z "$lib" ]; then
  echo "build_observer: CUPTI headers or library not found (looked in ${roots[*]}): not built" >&2
  exit 1
fi
cuda_inc=""
for r in "${CUDA_HOME:-/nonexistent}" /usr/local/cuda; do
  [ -f "$r/include/cuda.h" ] && { cuda_inc="$r/include"; break; }
done
so=$(ls "$lib"/libcupti.so* | sort | head -1)
cc=${CC:-gcc}
"$cc" -std=c11 -O2 -Wall -Wextra -shared -fPIC \
  -I"$inc" ${cuda_inc:+-I"$cuda_inc"} ${EXTRA_INCLUDES:-} \
  benchmarks/harness/observer/kf_observer.c -o "$out/libkf_observer.so" \
  -L"$lib" -l:"$(basename "$so")" -Wl,-rpath,"$lib" -lpthread
echo "build_observer: $out/libkf_observer.so (CUPTI $inc, $so)"
