#!/usr/bin/env bash
# Build the GPU binaries here (x86-64, glibc 2.36: they run on the newer CUDA image) and put
# them in .gpu/ (ignored by git through .git/info/exclude) for the device tool to carry.
#   bash bench/build_gpu_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example gpu_tma --example bench_stream
mkdir -p .gpu
cp target/release/examples/gpu_tma target/release/examples/bench_stream .gpu/
grep -qx '/.gpu/' "$(git rev-parse --git-common-dir)/info/exclude" 2>/dev/null \
  || echo '/.gpu/' >> "$(git rev-parse --git-common-dir)/info/exclude"
ls -la .gpu
