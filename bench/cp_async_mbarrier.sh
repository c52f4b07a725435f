#!/usr/bin/env bash
# Builds bench/cp_async_mbarrier.cu (the gallery's cp_async_mbarrier kernel in CUDA C++) with
# nvcc and runs both forms once; .ci/gpu-run.sh then runs each under compute-sanitizer
# synccheck (SANITIZE=1). nvcc is looked for as bench/pingpong.sh does.
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || { [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc; } || true
if [ -z "$NVCC" ]; then
  NVCC=$(python3 -c 'import nvidia, os
for p in nvidia.__path__:
    c = os.path.join(p, "cu13", "bin", "nvcc")
    if os.path.isfile(c): print(c); break' 2>/dev/null || true)
fi
[ -n "$NVCC" ] && [ -x "$NVCC" ] || { echo "cp_async_mbarrier.sh: nvcc not found (set NVCC=...)" >&2; exit 1; }
echo "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
"$NVCC" -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -o cp_async_mbarrier cp_async_mbarrier.cu
./cp_async_mbarrier plain
./cp_async_mbarrier noinc
