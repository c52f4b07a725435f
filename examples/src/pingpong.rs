//! The mbarrier ping-pong, built with the builder API: the latency of one
//! arrive + one wait per side per round trip, i.e. of the wait loop every pipeline runs on its
//! hot path. The same kernels in CUDA C++ (CUTLASS's `ClusterBarrier`) are in
//! `bench/pingpong.cu`; `bench_pingpong` times both in one process.
//!
//! Per round trip `r` (barriers expect one arrival per phase):
//! - CTA variant, 64 threads: warp 0's lane 0 arrives on `ping`, warp 0 waits on `pong`
//!   (parity `r & 1`); warp 1 waits on `ping`, its lane 0 arrives on `pong`.
//! - Cluster variant, two CTAs of 32 threads: each arrives on the *peer's* barrier
//!   (`mapa` + `mbarrier.arrive.shared::cluster`, CUTLASS's `ClusterBarrier::arrive(cta)`)
//!   and waits on its own.
//!
//! The parity is `r & 1`, as in the CUDA version, so both kernels do the same work.
//!
//! nvcc unrolls the CUDA loop 4x (the parities become constants and the loop test runs once
//! per 4 round trips); `#pragma unroll 1` keeps it rolled. Both shapes exist here too:
//! `unroll = 1` is the plain loop, `unroll = 4` the body four times per iteration with the
//! parities 0, 1, 0, 1 (round counts must then be multiples of 4), so each Phaser kernel is
//! compared with the nvcc kernel of the same loop shape.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Ordering, Type, Value};
use phaser::codegen::{Kernel, Result, Target};

/// Block size of the CTA variant: two warps.
pub const CTA_THREADS: u32 = 64;
/// Block size (and cluster size) of the cluster variant: one warp in each of two CTAs.
pub const CLUSTER_THREADS: u32 = 32;
pub const CLUSTER_CTAS: u32 = 2;

/// Unroll factors the kernels come in (1: the plain loop).
pub const UNROLLS: [u32; 2] = [1, 4];

/// `phaser_pingpong_cta`, `phaser_pingpong_cta_x4`, ...
pub fn kernel_name(base: &str, unroll: u32) -> String {
    if unroll == 1 {
        format!("phaser_pingpong_{base}")
    } else {
        format!("phaser_pingpong_{base}_x{unroll}")
    }
}

/// `for r in 0..rounds { body(r's parity) }`, `unroll` round trips per loop iteration (with
/// constant parities when unrolled; `rounds` is then a multiple of `unroll`).
#[track_caller]
fn rounds_loop(k: &mut KernelBuilder, rounds: Value, unroll: u32, body: impl Fn(&mut KernelBuilder, Value)) {
    if unroll == 1 {
        k.for_range(Value::u32(0), rounds, |k, r| {
            let parity = k.and(r, Value::u32(1));
            body(k, parity);
        });
    } else {
        k.for_range_step(Value::u32(0), rounds, unroll, |k, _| {
            for j in 0..unroll {
                body(k, Value::u32(j & 1));
            }
        });
    }
}

/// Two warps of one CTA pass a token back and forth `rounds` times.
pub fn pingpong_cta(unroll: u32) -> Result<Kernel> {
    let mut k = KernelBuilder::new(kernel_name("cta", unroll), Target::Sm90a);
    let rounds = k.param("rounds", Type::U32);
    k.require_block(CTA_THREADS, 1, 1);
    k.min_blocks_per_sm(1);
    let bars = k.alloc_barriers("bars", 2);
    // Both addresses once, before the loops (the loop bodies reuse the registers).
    let ping = k.barrier_at(bars, Value::u32(0));
    let pong = k.barrier_at(bars, Value::u32(1));
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(ping, Value::u32(1));
        k.mbarrier_init(pong, Value::u32(1));
    });
    k.cta_sync();
    let warp = k.warp_idx();
    let lane = k.lane_idx();
    let leader = k.eq(lane, Value::u32(0));
    let side_a = k.eq(warp, Value::u32(0));
    k.if_else(
        side_a,
        |k| {
            rounds_loop(k, rounds, unroll, |k, parity| {
                k.if_then(leader, |k| {
                    k.mbarrier_arrive(ping);
                });
                k.mbarrier_wait(pong, parity);
            });
        },
        |k| {
            rounds_loop(k, rounds, unroll, |k, parity| {
                k.mbarrier_wait(ping, parity);
                k.if_then(leader, |k| {
                    k.mbarrier_arrive(pong);
                });
            });
        },
    );
    k.finish()
}

/// Two CTAs of a cluster pass a token through each other's barrier `rounds` times.
pub fn pingpong_cluster(unroll: u32) -> Result<Kernel> {
    let mut k = KernelBuilder::new(kernel_name("cluster", unroll), Target::Sm90a);
    let rounds = k.param("rounds", Type::U32);
    k.require_block(CLUSTER_THREADS, 1, 1);
    k.cluster(CLUSTER_CTAS, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let bar = k.barrier_at(bars, Value::u32(0));
    let rank = k.cluster_cta_rank();
    let peer = k.xor(rank, Value::u32(1));
    let remote = k.map_barrier_to_cta(bar, peer);
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.fence_mbarrier_init();
    });
    k.cluster_sync();
    let lane = k.lane_idx();
    let leader = k.eq(lane, Value::u32(0));
    let side_a = k.eq(rank, Value::u32(0));
    k.if_else(
        side_a,
        |k| {
            rounds_loop(k, rounds, unroll, |k, parity| {
                k.if_then(leader, |k| k.mbarrier_arrive_remote_with(remote, None, Ordering::default()));
                k.mbarrier_wait(bar, parity);
            });
        },
        |k| {
            rounds_loop(k, rounds, unroll, |k, parity| {
                k.mbarrier_wait(bar, parity);
                k.if_then(leader, |k| k.mbarrier_arrive_remote_with(remote, None, Ordering::default()));
            });
        },
    );
    // No CTA may exit while its peer can still arrive on its barrier.
    k.cluster_sync();
    k.finish()
}

/// Every kernel: both variants, rolled and unrolled (for PTX dumps and ptxas).
pub fn kernels() -> Result<Vec<Kernel>> {
    let mut v = Vec::new();
    for u in UNROLLS {
        v.push(pingpong_cta(u)?);
        v.push(pingpong_cluster(u)?);
    }
    Ok(v)
}
