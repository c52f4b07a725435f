#!/usr/bin/env bash
# Does the kernel's Rust line reach the NVIDIA tools? Runs one tool on ./bin/diag_lineinfo
# (from .gpu/, where .ci/gpu-run.sh calls it) and passes only if the tool's output contains
# the file (and line) the diagnostic printed as "expected: ...".
#   bash bench/lineinfo.sh memcheck   # compute-sanitizer memcheck on a deliberate OOB store
#   bash bench/lineinfo.sh cudagdb    # cuda-gdb stops at that store (illegal address)
#   bash bench/lineinfo.sh nvdisasm   # nvdisasm -g on the cubin the runtime's line-info JIT made
#   bash bench/lineinfo.sh ncu        # Nsight Compute's source page of stream_axpb
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:?mode: memcheck | cudagdb | nvdisasm | ncu}
out=$(mktemp)
find_tool() {  # on PATH, else next to nvcc / in /usr/local/cuda
  command -v "$1" 2>/dev/null && return
  for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer /opt/nvidia/nsight-compute/*; do
    [ -x "$d/$1" ] && { echo "$d/$1"; return; }
  done
  python3 -c 'import nvidia, os, sys
for p in nvidia.__path__:
    c = os.path.join(p, "cu13", "bin", sys.argv[1])
    if os.path.isfile(c): print(c); break' "$1" 2>/dev/null
}
case "$mode" in
  memcheck)
    tool=$(find_tool compute-sanitizer) || true
    [ -n "$tool" ] || { echo "compute-sanitizer not found"; exit 2; }
    "$tool" --tool memcheck --show-backtrace device ./bin/diag_lineinfo oob > "$out" 2>&1 ;;
  cudagdb)
    tool=$(find_tool cuda-gdb) || true
    [ -n "$tool" ] || { echo "cuda-gdb not found"; exit 2; }
    ./bin/diag_lineinfo oob 2>/dev/null | grep '^expected: ' > "$out"
    timeout 120 "$tool" -batch -ex run -ex bt -ex 'info line *$pc' --args ./bin/diag_lineinfo oob >> "$out" 2>&1 ;;
  nvdisasm)
    tool=$(find_tool nvdisasm) || true
    [ -n "$tool" ] || { echo "nvdisasm not found"; exit 2; }
    dir=$(mktemp -d)
    ./bin/diag_lineinfo cubin "$dir" > "$out" 2>&1
    for c in "$dir"/*.cubin; do echo "== $c"; "$tool" -g -c "$c" | grep '//## File' | sort | uniq -c | head -20; done >> "$out" 2>&1 ;;
  ncu)
    tool=$(find_tool ncu) || true
    [ -n "$tool" ] || { echo "ncu not found"; exit 2; }
    rep=$(mktemp -u).ncu-rep
    "$tool" --import-source yes --set basic -k regex:stream_axpb -c 1 -o "${rep%.ncu-rep}" ./bin/diag_lineinfo profile > "$out" 2>&1
    "$tool" -i "$rep" --page source --csv --print-source cuda,sass 2>&1 | grep -m 20 -E '\.rs' >> "$out" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
cat "$out"
want=$(grep -m1 '^expected: ' "$out" | sed 's/^expected: //')
[ -n "$want" ] || { echo "LINE INFO: the diagnostic printed no expected line"; exit 1; }
if grep -v '^expected: ' "$out" | grep -F -q "$want"; then
  echo "LINE INFO OK: $mode shows $want"
else
  echo "LINE INFO MISSING: $mode does not show $want"
  exit 1
fi
