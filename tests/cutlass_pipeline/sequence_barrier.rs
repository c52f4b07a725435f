//! CUTLASS `test/unit/pipeline/sequence_barrier.cu`: an `OrderedSequenceBarrier<Depth,
//! Length>` of `Length` groups of 128 threads (one CTA, a 1 x 1 x 1 cluster), each group
//! waiting for the previous one at every step (group 0 for the last, `Depth` steps back).
//! The DSL has no sequence barrier: it is `Depth x Length` barriers and a (stage, phase)
//! walked by hand, as CUTLASS writes it. Each group's thread 0 takes a ticket (a shared
//! counter) at every step it enters, so the host checks the order the barrier guarantees.

use super::*;
use phaser::LaunchConfig;

/// The file's `TEST`s: `Depth_2_Length_{2,3,4,5}` (`m` is the group count, `stages` the depth).
pub const CONFIGS: &[Config] = &[cfg(2, 1, 2), cfg(3, 1, 2), cfg(4, 1, 2), cfg(5, 1, 2)];

const THREADS_PER_GROUP: u32 = 128;

#[phaser::kernel(target = "sm_90a")]
pub fn cutlass_sequence_barrier(tickets: &mut [u32], iterations: u32, #[comptime] DEPTH: u32, #[comptime] LENGTH: u32) {
    T.cluster_dims(1, 1, 1);
    let bars = T.alloc_barriers(DEPTH * LENGTH);
    let counter = T.alloc_shared::<u32>([1]);
    let tid = T.thread_idx();
    let group = tid / THREADS_PER_GROUP;
    if tid == 0 {
        for i in 0..DEPTH * LENGTH {
            T.ptx.mbarrier.init(bars.ptr_to([i]), THREADS_PER_GROUP);
        }
        counter[0] = 0;
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    T.ptx.barrier.cluster.arrive_relaxed();
    T.ptx.barrier.cluster.wait();
    // Group 0 starts with the opposite phase: its first Depth waits pass.
    let mut stage = 0;
    let mut phase = if group == 0 { 1 } else { 0 };
    let next = (group + 1) % LENGTH;
    let leader = tid % THREADS_PER_GROUP == 0;
    let mut step = 0;
    for _i in 0..iterations {
        for _half in 0..2 {
            // wait(): this group's barrier of the current stage.
            T.ptx.mbarrier.try_wait(bars.ptr_to([stage * LENGTH + group]), phase);
            if leader {
                let ticket = T.atomic.add(counter, 0, 1, "relaxed", "cta");
                tickets[group * 2 * iterations + step] = ticket;
            }
            T.nanosleep(100000);
            // arrive(): the next group's barrier of this stage, then the next stage.
            T.ptx.mbarrier.arrive(bars.ptr_to([stage * LENGTH + next]));
            stage += 1;
            if stage == DEPTH {
                stage = 0;
                phase ^= 1;
            }
            step += 1;
        }
    }
    T.ptx.barrier.cluster.arrive();
    T.ptx.barrier.cluster.wait();
}

pub fn run(dev: &Device, case: &Case) -> Outcome {
    let Config { m: length, stages: depth, .. } = case.cfg;
    let steps = 2 * case.iterations;
    let mut tickets = dev.alloc::<u32>((length * steps) as usize).map_err(|e| fail(case, e))?;
    let report = cutlass_sequence_barrier::launch(
        dev,
        LaunchConfig::linear(1, length * THREADS_PER_GROUP),
        &mut tickets,
        case.iterations,
        depth,
        length,
    )
    .map_err(|e| fail(case, e))?;
    let t = dev.download(&tickets).map_err(|e| fail(case, e))?;
    let at = |g: u32, k: u32| t[(g * steps + k) as usize];
    // Every ticket once: each group entered every step.
    let mut sorted = t.clone();
    sorted.sort_unstable();
    if sorted != (0..length * steps).collect::<Vec<_>>() {
        return Err(fail(case, format!("the tickets are not 0..{}: {t:?}", length * steps)));
    }
    // The order the barrier guarantees: group g enters step k after group g - 1 left it,
    // group 0 enters step k after group Length - 1 left step k - Depth.
    for k in 0..steps {
        for g in 1..length {
            if at(g, k) < at(g - 1, k) {
                return Err(fail(case, format!("group {g} entered step {k} before group {}", g - 1)));
            }
        }
        if k >= depth && at(0, k) < at(length - 1, k - depth) {
            return Err(fail(
                case,
                format!("group 0 entered step {k} before group {} left step {}", length - 1, k - depth),
            ));
        }
    }
    Ok(report)
}
