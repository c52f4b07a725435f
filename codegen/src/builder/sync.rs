//! CTA barriers, fences, `elect.sync`, `setmaxnreg`, cluster barriers.

use super::kernel_builder::KernelBuilder;
use crate::ir::*;

impl KernelBuilder {
    /// `T.cuda.cta_sync()` = `bar.sync 0`.
    #[track_caller]
    pub fn cta_sync(&mut self) {
        self.push(SyncOp::BarSync { id: Value::u32(0), count: None });
    }
    /// `T.ptx.bar.sync(id, count)`: a named barrier over `count` threads.
    #[track_caller]
    pub fn bar_sync(&mut self, id: Value, count: Option<Value>) {
        self.push(SyncOp::BarSync { id, count });
    }
    #[track_caller]
    pub fn bar_arrive(&mut self, id: Value, count: Value) {
        self.push(SyncOp::BarArrive { id, count });
    }
    /// `T.ptx.fence.mbarrier_init()`.
    #[track_caller]
    pub fn fence_mbarrier_init(&mut self) {
        self.push(SyncOp::FenceMbarrierInit);
    }
    /// `T.ptx.fence.proxy_async(space)`.
    #[track_caller]
    pub fn fence_proxy_async(&mut self, space: ProxySpace) {
        self.push(SyncOp::FenceProxyAsync { space });
    }
    #[track_caller]
    pub fn fence(&mut self, scope: MemScope) {
        self.push(SyncOp::MemBar { scope });
    }
    /// `__syncwarp()`: `bar.warp.sync 0xffffffff` (all 32 lanes must reach it).
    #[track_caller]
    pub fn warp_sync(&mut self) {
        self.warp_sync_with(Value::u32(0xffff_ffff));
    }
    /// `__syncwarp(mask)`: `bar.warp.sync mask`; every lane of `mask` must reach a
    /// `bar.warp.sync` with the same mask, and the executing lane must be in it.
    #[track_caller]
    pub fn warp_sync_mask(&mut self, mask: u32) {
        self.warp_sync_with(Value::u32(mask));
    }
    /// `__syncwarp(mask)` with a mask computed at run time (e.g. `activemask`).
    #[track_caller]
    pub fn warp_sync_with(&mut self, mask: Value) {
        self.push(SyncOp::WarpSync { mask });
    }
    /// A named barrier over this thread's warpgroup (the 128 threads `128 w .. 128 w + 127`):
    /// `bar.sync base + w, 128`. Warpgroups use ids `base..base + warpgroups`; keep other named
    /// barriers out of that range (the default base 8 leaves 1-7 free, as CUTLASS reserves
    /// its own ids below 8).
    #[track_caller]
    pub fn warpgroup_sync(&mut self, base: u32) {
        self.at_caller(|k| {
            let w = k.warpgroup_idx();
            let id = k.add(w, Value::u32(base));
            k.bar_sync(id, Some(Value::u32(128)));
        })
    }
    /// `nanosleep.u32 ns`: a backoff hint.
    #[track_caller]
    pub fn nanosleep(&mut self, ns: Value) {
        self.push(SyncOp::Nanosleep { ns });
    }
    /// `griddepcontrol.wait`: wait for the prerequisite grids of a programmatic dependent launch.
    #[track_caller]
    pub fn griddep_wait(&mut self) {
        self.push(SyncOp::GridDepWait);
    }
    /// `griddepcontrol.launch_dependents`: let the dependent grid start.
    #[track_caller]
    pub fn griddep_launch_dependents(&mut self) {
        self.push(SyncOp::GridDepLaunchDependents);
    }
    /// `T.ptx.elect_sync()`: true in exactly one lane of the (converged) warp.
    #[track_caller]
    pub fn elect_sync(&mut self) -> Value {
        let pred = self.new_reg(Type::Pred);
        self.push(SyncOp::ElectSync { pred });
        Value::Reg(pred)
    }
    /// `T.ptx.activemask()`: the lanes of the warp executing this together, as a mask.
    #[track_caller]
    pub fn activemask(&mut self) -> Value {
        let dst = self.new_reg(Type::U32);
        self.push(SyncOp::ActiveMask { dst });
        Value::Reg(dst)
    }
    /// `setmaxnreg.inc/dec` (sm_90a): rebalance registers between warpgroup roles.
    #[track_caller]
    pub fn setmaxnreg(&mut self, inc: bool, count: u32) {
        self.push(SyncOp::SetMaxNReg { inc, count });
    }
    #[track_caller]
    pub fn cluster_arrive(&mut self) {
        self.push(SyncOp::ClusterArrive { relaxed: false });
    }
    #[track_caller]
    pub fn cluster_arrive_relaxed(&mut self) {
        self.push(SyncOp::ClusterArrive { relaxed: true });
    }
    #[track_caller]
    pub fn cluster_wait(&mut self) {
        self.push(SyncOp::ClusterWait);
    }
    /// `barrier.cluster.arrive` + `barrier.cluster.wait`.
    #[track_caller]
    pub fn cluster_sync(&mut self) {
        self.cluster_arrive();
        self.cluster_wait();
    }
    /// Abort the kernel.
    #[track_caller]
    pub fn trap(&mut self) {
        self.push(SyncOp::Trap);
    }
}
