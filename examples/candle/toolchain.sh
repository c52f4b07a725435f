#!/usr/bin/env bash
# Makes the CUDA toolkit candle's `cuda` build needs, from pip wheels, in $1 (default
# ~/.cache/phaser-candle-cuda), and prints the environment to build with (eval it):
# - nvcc 13.0 (candle-kernels compiles its kernels to PTX at build time; the H200's driver
#   580 is CUDA 13.0 and refuses the PTX of a newer nvcc), with its headers (CCCL: cuda_fp16.h
#   includes nv/target);
# - libcublas, libcublasLt, libcurand and libnvrtc to link against (candle links them:
#   cudarc's `dynamic-linking`; at run time the GPU machine's own are used);
# - a libcuda.so link stub (soname libcuda.so.1: the driver's library is used at run time),
#   one empty function per driver entry point of cudarc's bindings, as the toolkit's own
#   lib64/stubs/libcuda.so is.
set -euo pipefail
root=${1:-$HOME/.cache/phaser-candle-cuda}
if [ ! -x "$root/bin/nvcc" ]; then
  mkdir -p "$root.pip" "$root/lib64/stubs"
  pip install -q --no-deps --target "$root.pip" "nvidia-cuda-nvcc==13.0.88" "nvidia-cuda-runtime==13.0.96" \
    "nvidia-cuda-crt==13.0.88" "nvidia-nvvm==13.0.88" "nvidia-cuda-cccl==13.0.85" "nvidia-cublas<13.1" "nvidia-curand<10.4.1" \
    "nvidia-cuda-nvrtc==13.0.88" >&2
  cu="$root.pip/nvidia/cu13"
  ln -sfn "$cu/bin" "$root/bin"; ln -sfn "$cu/include" "$root/include"; ln -sfn "$cu/nvvm" "$root/nvvm"
  for f in "$cu"/lib/*; do ln -sf "$f" "$root/lib64/"; done
  for l in cublas cublasLt nvrtc cudart; do ln -sf "lib$l.so.13" "$root/lib64/lib$l.so"; done
  ln -sf libcurand.so.10 "$root/lib64/libcurand.so"
  sys=$(ls -d ~/.cargo/registry/src/*/cudarc-0.19.10/src/driver/sys/mod.rs | head -1)
  grep -oP '^pub unsafe fn \Kcu\w+' "$sys" | sort -u | sed 's/.*/void &(void) {}/' > "$root/libcuda_stub.c"
  cc -shared -fPIC -o "$root/lib64/stubs/libcuda.so" -Wl,-soname,libcuda.so.1 "$root/libcuda_stub.c"
fi
echo "export CUDA_ROOT=$root CUDA_PATH=$root PATH=$root/bin:\$PATH CUDA_COMPUTE_CAP=90 LIBRARY_PATH=$root/lib64/stubs"
