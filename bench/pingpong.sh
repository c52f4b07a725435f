#!/usr/bin/env bash
# Builds bench/pingpong.cu with nvcc (cubin for bench_pingpong, and a standalone timer) and
# runs the standalone timer. Runs on the GPU machine (.ci/gpu-run.sh calls it); nvcc is looked
# for on PATH, in /usr/local/cuda, then in the PyPI package nvidia-cuda-nvcc.
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
[ -n "$NVCC" ] && [ -x "$NVCC" ] || { echo "pingpong.sh: nvcc not found (set NVCC=...)" >&2; exit 1; }
echo "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
ARCH="-gencode=arch=compute_90a,code=sm_90a"
"$NVCC" -O3 $ARCH -cubin -DPINGPONG_NO_MAIN -o pingpong.cubin pingpong.cu
"$NVCC" -O3 $ARCH -o pingpong pingpong.cu
./pingpong "${ROUNDS:-1000000}" 5
