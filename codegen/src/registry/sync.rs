//! Fences; CTA, warp and cluster synchronization; register reallocation; `trap`.

use crate::ir::{MemScope, ProxySpace};

const PROXY: super::Choice<ProxySpace> = choice![
    "all" => ProxySpace::All,
    "shared::cta" => ProxySpace::SharedCta,
    "shared::cluster" => ProxySpace::SharedCluster,
    "global" => ProxySpace::Global,
];
/// Every memory scope (`MemScope::ALL`: `.gpu` first, the default where it is optional).
pub(super) const MEM_SCOPE: super::Choice<MemScope> = super::Choice { names: &MemScope::NAMES, values: &MemScope::ALL };

ops! {
    /// `fence.proxy.async[.space]`
    "ptx.fence.proxy_async" ["cutlass:fence_view_async_shared", "cute:tma_store_fence", "gluon:fence_async_shared"]
        (; space: Choice(PROXY)) -> Unit = |k, call| k.fence_proxy_async(space);
    /// `fence.mbarrier_init.release.cluster`
    "ptx.fence.mbarrier_init" ["cutlass:fence_barrier_init", "gluon:mbarrier.fence_init_release_cluster"] () -> Unit
        = |k, call| k.fence_mbarrier_init();
    /// `fence.acq_rel.scope`
    "ptx.fence.acq_rel" (scope: Choice(MEM_SCOPE)) -> Unit = |k, call| k.fence(scope);
    /// true in exactly one lane of the warp
    "ptx.elect_sync" ["cute:elect_one_sync"] () -> Bool = |k, call| k.elect_sync();
    /// the lanes of the warp executing this instruction together, as a bit mask
    "ptx.activemask" ["cuda:__activemask"] () -> U32 = |k, call| k.activemask();
    /// `__syncthreads()` (`bar.sync 0`)
    "cuda.cta_sync" ["cuda:__syncthreads"] () -> Unit = |k, call| k.cta_sync();
    /// named barrier `id` over `count` threads (all when omitted)
    "ptx.bar.sync" ["cutlass:NamedBarrier::sync"] (id: U32 = 1; count: U32 = 64) -> Unit = |k, call| k.bar_sync(id, count);
    /// `bar.arrive id, count`
    "ptx.bar.arrive" ["cutlass:NamedBarrier::arrive"] (id: U32 = 1, count: U32 = 64) -> Unit = |k, call| k.bar_arrive(id, count);
    /// `setmaxnreg.inc.sync.aligned.u32 count`
    "ptx.setmaxnreg.inc" ["cutlass:warpgroup_reg_alloc"] (count: Const = 232) -> Unit = |k, call| k.setmaxnreg(true, count);
    /// `setmaxnreg.dec.sync.aligned.u32 count`
    "ptx.setmaxnreg.dec" ["cutlass:warpgroup_reg_dealloc"] (count: Const = 40) -> Unit = |k, call| k.setmaxnreg(false, count);
    /// `barrier.cluster.arrive`
    "ptx.barrier.cluster.arrive" ["cute:cluster_arrive"] () -> Unit = |k, call| k.cluster_arrive();
    /// `barrier.cluster.arrive.relaxed`
    "ptx.barrier.cluster.arrive_relaxed" ["cute:cluster_arrive_relaxed"] () -> Unit = |k, call| k.cluster_arrive_relaxed();
    /// `barrier.cluster.wait`
    "ptx.barrier.cluster.wait" ["cute:cluster_wait"] () -> Unit = |k, call| k.cluster_wait();
    /// cluster arrive + wait
    "cuda.cluster_sync" ["cute:cluster_sync"] () -> Unit = |k, call| k.cluster_sync();
    /// abort the kernel
    "ptx.trap" ["cuda:__trap"] () -> Unit = |k, call| k.trap();
}
