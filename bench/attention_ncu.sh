#!/usr/bin/env bash
# Nsight Compute at base clocks (--clock-control base: the durations do not depend on where the
# power cap puts the SM clock) for the attention note: Phaser's attention_dsl and torch's cuDNN
# SDPA at one shape, profiled the same way. Runs on the GPU machine from the bundle's root.
# Usage: bash bench/attention_ncu.sh [d] [seq]    (defaults: 128 8192, non-causal and causal)
set -uo pipefail
cd "$(dirname "$0")/.."
D=${1:-128}
SEQ=${2:-8192}
NCU=${NCU_BIN:-$(command -v ncu || true)}
[ -n "$NCU" ] || { echo "attention_ncu: ncu (Nsight Compute) not found" >&2; exit 1; }
METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,smsp__inst_executed.sum,sm__inst_executed_pipe_xu.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
# Where the warps wait (every stall reason, per issued instruction): what the tensor pipe's idle
# cycles are spent on, side by side for both kernels.
# If this ncu does not know one of them, the run is repeated with the base metrics alone.
BASE_METRICS=$METRICS
for r in branch_resolving dispatch_stall drain imc_miss lg_throttle math_pipe_throttle \
    membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do
  METRICS="$METRICS,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
echo "--- Phaser attention_dsl, d$D seq $SEQ (every causal x ping-pong configuration of bench_attention --check)"
"$NCU" --clock-control base --metrics "$METRICS" --kernel-name regex:attention_dsl \
  ./bin/bench_attention --check --shapes "${D}x${SEQ}" || {
  echo "ncu with the stall metrics failed (rc=$?): again with the base metrics"
  METRICS=$BASE_METRICS
  "$NCU" --clock-control base --metrics "$METRICS" --kernel-name regex:attention_dsl \
    ./bin/bench_attention --check --shapes "${D}x${SEQ}" || { echo "ncu on bench_attention failed: rc=$?"; exit 1; }
}
echo "--- torch SDPA (cuDNN), d$D seq $SEQ, the same B x H, non-causal then causal (the second launch of each is profiled)"
"$NCU" --clock-control base --metrics "$METRICS" --kernel-name regex:'sdpa|fmha|attention|flash' --launch-skip 1 --launch-count 1 \
  --target-processes all python3 - "$D" "$SEQ" <<'PY' || { echo "ncu on torch failed: rc=$?"; exit 1; }
import sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
d, s = int(sys.argv[1]), int(sys.argv[2])
b, h = 16384 // s, 2048 // d
q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(2):
        F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
print(f"torch SDPA cuDNN B {b} H {h} S {s} D {d}")
PY
