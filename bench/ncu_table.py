#!/usr/bin/env python3
"""The summary tables of the Nsight Compute scripts (bench/gemm_ncu.sh, gemm_fp8_ncu.sh,
decode_ncu.sh), from ncu's raw CSV (`--csv --page raw`: the program's own output, then a header
line "ID","Process ID",..., a units row, one row per profiled launch).

Usage: ncu_table.py gemm CSV                      Phaser next to cuBLAS, every metric column
       ncu_table.py fp8 CSV...                   the blockwise FP8 GEMM's variants, a column each
       ncu_table.py decode CSV SHAPE CONFIG       one decode shape, DSL next to cuBLAS

Checked on saved CSVs (bench/testdata/ncu/) against the tables they print by
examples/tests/bench_scripts.rs.
"""
import csv, io, os, sys


def raw(path, who, see):
    """(header, units, rows of whole launches) of the CSV at `path`; exits naming `who`."""
    text = open(path).read()
    # The CSV starts at its header line ("ID","Process ID",...); the program's output precedes it.
    start = text.find('"ID"')
    if start < 0:
        print(f"{who}: no CSV from ncu in {path} (see {see})")
        sys.exit(1)
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, units = rows[0], rows[1]
    return header, units, [r for r in rows[2:] if len(r) == len(header)]


def gemm(path):
    header, units, data = raw(path, "gemm_ncu", "ncu_metrics.err")
    name_col = header.index("Kernel Name")
    kernels = [(r[name_col], r) for r in data]
    if len(kernels) < 2:
        print(f"gemm_ncu: expected 2 profiled kernels, got {len(kernels)}")

    def short(n):
        return ("Phaser " if n.startswith("phaser") else "cuBLAS ") + n[:40]

    print()
    print("==================== ncu summary (--clock-control none) ====================")
    print("| metric | unit | " + " | ".join(short(n) for n, _ in kernels) + " |")
    for i, h in enumerate(header):
        if "__" not in h:
            continue
        print(f"| {h} | {units[i]} | " + " | ".join(r[i] for _, r in kernels) + " |")


def fp8(paths):
    cols = []
    for path in paths:
        header, units, data = raw(path, "gemm_fp8_ncu", "the .err next to it")
        if len(data) != 1:
            print(f"gemm_fp8_ncu: expected 1 profiled launch in {path}, got {len(data)}")
            sys.exit(1)
        cols.append(dict(zip(header, data[0])))
        units_of = dict(zip(header, units))
    # A column per CSV, named by its file (`[ncu_]fp8_<variant>.csv`).
    labels = []
    for path in paths:
        stem = os.path.basename(path).removesuffix(".csv").removeprefix("ncu_").removeprefix("fp8_")
        labels.append(FP8_LABELS.get(stem, stem))
    print()
    print("==================== ncu summary (--clock-control base, gemm_fp8_dsl blockwise) ====================")
    print("| metric | unit | " + " | ".join(labels) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in labels) + " |")
    for h in cols[0]:
        if "__" in h:
            print(f"| {h} | {units_of.get(h, '')} | " + " | ".join(c.get(h, "-") for c in cols) + " |")


# The fp8 table's column names of bench/gemm_fp8_ncu.sh's variants (others: the variant's own).
FP8_LABELS = {"frags1": "FRAGS=1", "frags2": "FRAGS=2", "smem_scales": "smem_scales (FRAGS=1)"}


# Units to the table's: durations to us, bytes to bytes, clocks to MHz.
FACTORS = {
    "nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
    "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
    "cycle/second": 1e-6, "cycle/usecond": 1.0, "cycle/nsecond": 1e3, "Mcycle/second": 1.0, "Ghz": 1e3, "Mhz": 1.0,
}


def decode(path, shape, config):
    header, units, data = raw(path, "decode_ncu", "decode_ncu_raw.csv")
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


USAGE = "usage: ncu_table.py gemm CSV | fp8 CSV [CSV...] | decode CSV SHAPE CONFIG"

if __name__ == "__main__":
    kind, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else (None, [])
    if kind == "gemm" and len(args) == 1:
        gemm(args[0])
    elif kind == "fp8" and len(args) >= 1:
        fp8(args)
    elif kind == "decode" and len(args) == 3:
        decode(*args)
    else:
        sys.exit(USAGE)
