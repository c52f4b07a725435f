#!/usr/bin/env bash
# Nsight Compute on ONE decode shape (default 64x4096x4096, K-major B): the DSL GEMM's best
# decode candidate next to cuBLAS, at base clocks (--clock-control base: both sides at the
# same fixed clock, so the ratio is the kernels', not the boost of the moment).
#
# The DSL configuration: $DECODE_CONFIG if set (a kernel name, e.g.
# phaser_gemm_128x64x64_s8_c1_g8_k4f_kmajor), else the one `bench_gemm --decode-variants`
# recorded in the choice cache for this shape ($CACHE_DIR or the user's cache; the newest
# entry for the shape on any device), else the model's choice (bench_gemm's default with
# --impl dsl is not a decode configuration, so the model's is named explicitly).
# `bench_gemm --profile` runs 3 warm-up rounds and one profiled round of each side; every
# launch of the matching kernels is profiled (a few small kernels), the summary takes the
# last instance of each kernel name (the profiled round).
#
# One pass with the sections SpeedOfLight, MemoryWorkloadAnalysis, LaunchStats, Occupancy,
# WarpStateStats, exported; then two imports of the report: the details text
# (decode_ncu_details.txt) and the raw metrics (decode_ncu_raw.csv), from which one table
# prints duration, DRAM throughput, B's bandwidth, grid, occupancy and the top stall
# reasons of each kernel side by side.
# Usage: bash bench/decode_ncu.sh [path/to/bench_gemm] [shape]
set -uo pipefail
cd "$(dirname "$0")/.."
# The summary table from ncu's raw CSV: summarize CSV SHAPE CONFIG.
summarize() {
python3 - "$1" "$2" "$3" <<'PY'
import csv, io, sys
text, shape, config = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
start = text.find('"ID"')
if start < 0:
    print("decode_ncu: no CSV from ncu (see decode_ncu_raw.csv)")
    sys.exit(1)
rows = list(csv.reader(io.StringIO(text[start:])))
header, units, data = rows[0], rows[1], [r for r in rows[2:] if len(r) == len(rows[0])]
col = {h: i for i, h in enumerate(header)}
name_col = col["Kernel Name"]
# The last instance of each kernel name: the profiled round (after 3 warm-up rounds).
last = {}
for r in data:
    last[r[name_col]] = r
if not last:
    print("decode_ncu: no kernel profiled")
    sys.exit(1)
def num(r, h):
    try:
        return float(r[col[h]].replace(",", ""))
    except (KeyError, ValueError):
        return None
FACTORS = {
    # durations to us
    "nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
    # bytes to bytes
    "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
    # clocks to MHz
    "cycle/second": 1e-6, "cycle/usecond": 1.0, "cycle/nsecond": 1e3, "Mcycle/second": 1.0, "Ghz": 1e3, "Mhz": 1.0,
}
def scaled(r, h):
    v = num(r, h)
    if v is None:
        return None
    return v * FACTORS.get(units[col[h]], 1.0)
def fmt(v, p=1):
    return "-" if v is None else f"{v:.{p}f}"
def dsl(s):
    return "gemm_dsl" in s or "splitk_reduce" in s
m, n, k = (int(x) for x in shape.split("x"))
b_bytes = 2.0 * n * k
names = sorted(last, key=lambda s: (0 if dsl(s) else 1, s))
# The stall reasons WarpStateStats collected (cycles per issued instruction, by reason).
stall_cols = [h for h in header if "issue_stalled" in h and h.endswith("_per_issue_active.ratio")] \
    or [h for h in header if "issue_stalled" in h]
def short(h):
    for p in ("smsp__average_warp_latency_issue_stalled_", "smsp__average_warps_issue_stalled_", "smsp__pcsamp_warps_issue_stalled_"):
        h = h.replace(p, "")
    return h.split("_per_")[0]
print()
print(f"==================== decode ncu ({shape}, K-major; DSL {config}; --clock-control base) ====================")
print("| kernel | duration us | DRAM throughput % of peak | DRAM read MB | DRAM read TB/s | B bytes / duration TB/s | grid | regs | warps active % | SM MHz | top stall reasons (cycles per issue) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
total = {True: 0.0, False: 0.0}
for s in names:
    r = last[s]
    us = scaled(r, "gpu__time_duration.sum")
    rd = scaled(r, "dram__bytes_read.sum")
    rd_tb = None if (rd is None or not us) else rd / (us * 1e-6) / 1e12
    btb = None if not us else b_bytes / (us * 1e-6) / 1e12
    stalls = sorted(((num(r, h) or 0.0, h) for h in stall_cols), reverse=True)[:4]
    st = ", ".join(f"{short(h)} {v:.2f}" for v, h in stalls if v > 0)
    grid = r[col["launch__grid_size"]] if "launch__grid_size" in col else "-"
    regs = r[col["launch__registers_per_thread"]] if "launch__registers_per_thread" in col else "-"
    label = ("DSL " if dsl(s) else "cuBLAS ") + s[:48]
    print(f"| {label} | {fmt(us, 2)} | {fmt(num(r, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'))} | "
          f"{fmt(None if rd is None else rd / 1e6)} | {fmt(rd_tb, 2)} | {fmt(btb, 2)} | {grid} | {regs} | "
          f"{fmt(num(r, 'sm__warps_active.avg.pct_of_peak_sustained_active'))} | {fmt(scaled(r, 'sm__cycles_elapsed.avg.per_second'), 0)} | {st} |")
    if us is not None:
        total[dsl(s)] += us
print(f"one GEMM at base clocks: DSL {total[True]:.2f} us (its launches summed), cuBLAS {total[False]:.2f} us; "
      f"B is {b_bytes / 1e6:.1f} MB")
PY
}

# `bash bench/decode_ncu.sh selftest`: the summary of a CSV in ncu's raw form (a program line
# before the header, a units row, a warm-up and a profiled instance of the DSL kernel, one
# of cuBLAS's, durations in ns): the last instance of each name counts, units are converted.
if [ "${1:-}" = selftest ]; then
  csv=$(mktemp)
  cat > "$csv" <<'CSV'
profile 64x4096x4096 kmajor (profiled): DSL phaser_gemm_x 100.0 TFLOP/s
"ID","Process ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","sm__cycles_elapsed.avg.per_second","launch__grid_size","launch__registers_per_thread","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
"","","","nsecond","Mbyte","%","cycle/nsecond","","register/thread","%","inst","inst"
"0","1","gemm_dsl","30000","40.0","30.0","1.59","128","168","12.0","3.5","1.2"
"1","1","nvjet_tst_64x8_64x16","10,200","33.6","80.5","1.59","132","168","20.0","5.5","0.2"
"2","1","gemm_dsl","21000","33.6","40.1","1.59","128","168","12.0","3.5","1.2"
CSV
  out=$(summarize "$csv" 64x4096x4096 phaser_gemm_x); rm -f "$csv"
  echo "$out"
  ok=1
  grep -q '^| DSL gemm_dsl | 21.00 | 40.1 | 33.6 | 1.60 | 1.60 | 128 | 168 | 12.0 | 1590 | long_scoreboard 3.50, barrier 1.20 |$' <<<"$out" || ok=0
  grep -q '^| cuBLAS nvjet_tst_64x8_64x16 | 10.20 | 80.5 | 33.6 | 3.29 | 3.29 | 132 |' <<<"$out" || ok=0
  grep -q '^one GEMM at base clocks: DSL 21.00 us (its launches summed), cuBLAS 10.20 us' <<<"$out" || ok=0
  [ $ok = 1 ] && echo "selftest: as expected" || { echo "selftest: FAILED"; exit 1; }
  exit 0
fi
BENCH=${1:-./bin/bench_gemm}
SHAPE=${2:-64x4096x4096}
OUTDIR=${NCU_OUT:-./logs}
mkdir -p "$OUTDIR"
NCU=${NCU_BIN:-$(command -v ncu || true)}
for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
  [ -z "$NCU" ] && [ -x "$c" ] && NCU=$c
done
[ -n "$NCU" ] || { echo "decode_ncu: ncu (Nsight Compute) not found: install it or set NCU_BIN" >&2; exit 1; }
echo "ncu: $NCU ($("$NCU" --version | tail -1))"

CONFIG=${DECODE_CONFIG:-}
if [ -z "$CONFIG" ]; then
  CACHE=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/phaser/gemm_choice}
  ENTRY=$(ls -t "$CACHE"/*/"${SHAPE}_kmajor.txt" 2>/dev/null | head -1)
  if [ -n "$ENTRY" ]; then
    CONFIG=$(head -1 "$ENTRY")
    echo "decode_ncu: the measured choice $CONFIG (from $ENTRY)"
  fi
fi
if [ -z "$CONFIG" ]; then
  CONFIG=$("$BENCH" --print-choices --b kmajor --shapes "$SHAPE" | sed -n 's/^choose [^:]*: \([^ ]*\) .*/\1/p' | head -1)
  echo "decode_ncu: no measured choice for $SHAPE; the model's $CONFIG"
fi
[ -n "$CONFIG" ] || { echo "decode_ncu: no configuration to profile" >&2; exit 1; }

REP="$OUTDIR/decode_ncu"
rm -f "$REP.ncu-rep"
# The DSL GEMM's entry is gemm_dsl (and split-K's second launch gemm_splitk_reduce); cuBLAS's
# are nvjet_* / sm90_xmma_* / cutlass* (and its own split-K reductions).
FILTER='regex:gemm|nvjet|xmma|cutlass|splitK|reduce|gemv'
"$NCU" --clock-control base --kernel-name "$FILTER" \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread \
  --export "$REP" --force-overwrite \
  "$BENCH" --profile --impl dsl --b kmajor --config-name "$CONFIG" --shapes "$SHAPE" > "$OUTDIR/decode_ncu_run.txt" 2>&1
echo "profile pass: rc=$? (program and ncu output in $OUTDIR/decode_ncu_run.txt)"
grep '^profile' "$OUTDIR/decode_ncu_run.txt"
"$NCU" -i "$REP.ncu-rep" --page details > "$OUTDIR/decode_ncu_details.txt" 2>&1
"$NCU" -i "$REP.ncu-rep" --page raw --csv > "$OUTDIR/decode_ncu_raw.csv" 2>&1
echo "details in $OUTDIR/decode_ncu_details.txt, raw metrics in $OUTDIR/decode_ncu_raw.csv"
summarize "$OUTDIR/decode_ncu_raw.csv" "$SHAPE" "$CONFIG"
