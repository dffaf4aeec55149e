#!/usr/bin/env bash
# Builds what the GPU machine lacks, for the device tool's `carry` (both folders git-ignored
# through .git/info/exclude):
#   .whl/          wheels (CPython 3.12, manylinux x86-64) of the packages the agent and the bench
#                  need beyond what that machine has (docs: ../shared/GPU.md), at the versions this
#                  checkout's .venv has, plus pytest-xdist and pytest-timeout for the GPU tests
#   .carry/bwrap/  this machine's bubblewrap with the libraries `ldd` names, behind a wrapper
# Then: run(command="bash scripts/device_check.sh tests", carry=[".whl", ".carry"]).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
PACKAGES="langgraph langgraph-checkpoint langgraph-checkpoint-sqlite langgraph-prebuilt langgraph-sdk
langchain-core langchain-protocol langsmith jsonpatch jsonpointer orjson ormsgpack uuid_utils zstandard
aiosqlite sqlite-vec pydantic pydantic_core annotated-types typing-inspection pydantic-settings
python-dotenv openai anthropic httpx2 httpcore2 distro jiter sniffio docstring_parser tenacity
requests-toolbelt truststore opentelemetry-api websockets anyio typing_extensions xxhash
pytest-xdist execnet pytest-timeout"
mkdir -p .whl
for name in $PACKAGES; do
  version=$("$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name" 2>/dev/null || true)
  spec=$name${version:+==$version}
  ls .whl | grep -qi "^$(echo "$name" | tr '-' '_')-${version:-}" && continue
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_31_x86_64 --platform manylinux_2_34_x86_64 --platform any \
    -d .whl "$spec" || echo "warning: no wheel for $spec"
done
mkdir -p .carry/bwrap/lib
BWRAP=$(command -v bwrap)
cp "$BWRAP" .carry/bwrap/bwrap.real
for lib in $(ldd "$BWRAP" | awk '/=> \//{print $3}'); do
  case $(basename "$lib") in libc.so*|libm.so*|libpthread.so*|libdl.so*) continue;; esac
  cp -L "$lib" .carry/bwrap/lib/
done
cat > .carry/bwrap/bwrap <<'WRAP'
#!/bin/sh
here=$(dirname "$0")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bwrap.real" "$@"
WRAP
chmod +x .carry/bwrap/bwrap .carry/bwrap/bwrap.real
du -sh .whl .carry
