#!/usr/bin/env bash
# Does the kernel's Rust line reach the NVIDIA tools? Runs one tool on ./bin/diag_lineinfo
# (from .gpu/, where .ci/gpu-run.sh calls it) and passes only if the tool's output names the
# file (and line) the diagnostic printed as "expected: ...". Tools print that file in their own
# form (memcheck: `in diag_lineinfo.rs:39`, cuda-gdb: `at examples/src/bin/diag_lineinfo.rs:39`
# or `Line 39 of "..."`, nvdisasm: `File "...", line 39`): the check accepts any directory (or
# none) in front of the right basename, and the exact line where one is expected.
#   bash bench/lineinfo.sh memcheck   # compute-sanitizer memcheck on a deliberate OOB load
#   bash bench/lineinfo.sh cudagdb    # cuda-gdb at that load's fault: live, else a GPU core dump
#   bash bench/lineinfo.sh nvdisasm   # nvdisasm -g on the cubin the runtime's line-info JIT made
#   bash bench/lineinfo.sh ncu        # Nsight Compute's source page of stream_axpb
#   bash bench/lineinfo.sh selftest   # the matcher on the tools' forms (run by the Rust tests)
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:?mode: memcheck | cudagdb | nvdisasm | ncu | selftest}

# shows WANT FILE: does FILE (less the `expected:` lines) name WANT, `path/to/name.rs[:LINE]`
# (quotes around it ignored)? The basename must match whole, the line exactly.
shows() {
  local want=${1//\"/} file=$2 path line base re
  if [[ "$want" =~ ^(.*):([0-9]+)$ ]]; then path=${BASH_REMATCH[1]}; line=${BASH_REMATCH[2]}; else path=$want; line=; fi
  base=$(printf '%s' "${path##*/}" | sed 's/[]().*^$+?{}|[\]/\\&/g')
  local pre='(^|[^A-Za-z0-9_.-])([^[:space:]"'\'':]*/)?'
  if [ -n "$line" ]; then
    # `name.rs:39` (memcheck, gdb frames) or gdb's `Line 39 of "dir/name.rs"`.
    re="${pre}${base}:${line}([^0-9]|\$)|Line ${line} of \"([^\"]*/)?${base}\""
  else
    re="${pre}${base}([^A-Za-z0-9_.-]|\$)"
  fi
  grep -v '^expected: ' "$file" | grep -E -q "$re"
}

verdict() {  # verdict WANT FILE LABEL: the step's last line, and its exit status
  if shows "$1" "$2"; then echo "LINE INFO OK: $3 shows $1"; return 0; fi
  echo "LINE INFO MISSING: $3 does not show $1"; return 1
}

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

selftest() {  # each case: 0|1 (should it match), the expected text, the tool's line
  local t=$(mktemp) fails=0 n=0 want ok got
  while IFS='|' read -r ok want got; do
    [ -n "$ok" ] || continue
    printf 'expected: %s\n%s\n' "$want" "$got" > "$t"
    n=$((n + 1))
    if shows "$want" "$t"; then got_ok=1; else got_ok=0; fi
    [ "$got_ok" = "$ok" ] || { echo "selftest: want=$want line='$got': matched=$got_ok, should be $ok"; fails=$((fails + 1)); }
  done <<'CASES'
1|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in diag_lineinfo.rs:39
1|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in /work/main/examples/src/bin/diag_lineinfo.rs:39
1|examples/src/bin/diag_lineinfo.rs:39|#0  0x00007fffd3e0f480 in lineinfo_oob<<<(1,1,1),(32,1,1)>>> () at examples/src/bin/diag_lineinfo.rs:39
1|examples/src/bin/diag_lineinfo.rs:39|Line 39 of "examples/src/bin/diag_lineinfo.rs" starts at address 0x7fffd3e0f470 <lineinfo_oob+112> and ends at 0x7fffd3e0f490.
1|examples/src/bin/diag_lineinfo.rs:39|Line 39 of "diag_lineinfo.rs" is at address 0x7fffd3e0f470 <lineinfo_oob+112> but contains no code.
0|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in diag_lineinfo.rs:390
0|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in diag_lineinfo.rs:3
0|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in xdiag_lineinfo.rs:39
0|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in src/other/not_diag_lineinfo.rs:39
0|examples/src/bin/diag_lineinfo.rs:39|=========     at lineinfo_oob+0x80 in diag_lineinfoXrs:39
0|examples/src/bin/diag_lineinfo.rs:39|Line 40 of "examples/src/bin/diag_lineinfo.rs" starts at address 0x7fffd3e0f470
0|examples/src/bin/diag_lineinfo.rs:39|expected: examples/src/bin/diag_lineinfo.rs:39
0|examples/src/bin/diag_lineinfo.rs:39|No stack.
1|"examples/src/gallery/seeds.rs"|	//## File "examples/src/gallery/seeds.rs", line 47
0|"examples/src/gallery/seeds.rs"|	//## File "examples/src/gallery/dsl_seeds.rs", line 47
0|"examples/src/gallery/seeds.rs"|wrote /tmp/tmp.R0hklRvYhu/seed_producer_consumer.cubin (15648 bytes)
1|examples/src/gallery/stream_axpb.rs|"File Path","examples/src/gallery/stream_axpb.rs"
1|examples/src/gallery/stream_axpb.rs|"File Path","stream_axpb.rs"
0|examples/src/gallery/stream_axpb.rs|==WARNING==  examples/src/gallery/stream_axpb.rsx
CASES
  rm -f "$t"
  echo "selftest: $((n - fails)) of $n cases as expected"
  [ "$fails" = 0 ]
}

out=$(mktemp)
case "$mode" in
  selftest) selftest; exit ;;
  memcheck)
    tool=$(find_tool compute-sanitizer) || true
    [ -n "$tool" ] || { echo "compute-sanitizer not found"; exit 2; }
    "$tool" --tool memcheck --show-backtrace device ./bin/diag_lineinfo oob > "$out" 2>&1 ;;
  cudagdb)
    tool=$(find_tool cuda-gdb) || true
    [ -n "$tool" ] || { echo "cuda-gdb not found"; exit 2; }
    timeout 60 ./bin/diag_lineinfo oob 2>/dev/null | grep '^expected: ' > "$out"
    want=$(sed -n '1s/^expected: //p' "$out")
    [ -n "$want" ] || { echo "LINE INFO: the diagnostic printed no expected line"; exit 1; }
    cat "$out"
    # 1. Live: cuda-gdb runs the program and should stop at the device exception (cuda-gdb
    # stops on exceptions by default; the settings make the session independent of ~/.cuda-gdbinit
    # and synchronous). `$errorpc` is the faulting instruction, `$pc` the warp's current one.
    live=$(mktemp)
    echo "== live cuda-gdb session" > "$live"
    timeout 100 "$tool" -nx -batch -ex 'set pagination off' -ex 'set confirm off' \
      -ex 'set cuda break_on_launch none' -ex 'set cuda launch_blocking on' \
      -ex 'set cuda api_failures stop' -ex run -ex 'info cuda kernels' -ex bt \
      -ex 'info line *$errorpc' -ex 'info line *$pc' --args ./bin/diag_lineinfo oob >> "$live" 2>&1
    echo "(cuda-gdb exit status $?)" >> "$live"
    cat "$live"
    verdict "$want" "$live" "cudagdb (live session)" && exit 0
    # 2. A GPU core dump of the same fault, opened with `target cudacore` (cuda-gdb manual,
    # "GPU core dump support"). The driver aborts the process after writing the dump: no CPU
    # core (ulimit), and no memory contents in the GPU one (only the faulting warp's state).
    dump=$(mktemp -d)
    echo "== GPU core dump (CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1), opened with target cudacore" > "$live"
    ( ulimit -c 0
      CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION=0 \
      CUDA_COREDUMP_SHOW_PROGRESS=1 CUDA_COREDUMP_FILE="$dump/core.%p.nvcudmp" \
      CUDA_COREDUMP_GENERATION_FLAGS=skip_global_memory,skip_shared_memory,skip_local_memory \
      timeout 100 ./bin/diag_lineinfo oob ) >> "$live" 2>&1
    echo "(program exit status $?)" >> "$live"
    core=$(ls "$dump"/core.* 2>/dev/null | head -1)
    if [ -n "$core" ]; then
      echo "core dump: $core ($(stat -c %s "$core") bytes)" >> "$live"
      timeout 100 "$tool" -nx -batch -ex 'set pagination off' -ex "target cudacore $core" -ex bt \
        -ex 'info line *$errorpc' -ex 'info line *$pc' >> "$live" 2>&1
      echo "(cuda-gdb exit status $?)" >> "$live"
    else
      echo "no core dump was written to $dump" >> "$live"
    fi
    cat "$live"
    verdict "$want" "$live" "cudagdb (GPU core dump)"
    exit ;;
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
verdict "$want" "$out" "$mode"
