//! CTA/cluster barriers, fences and warp-level control.

use super::value::{Reg, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxySpace {
    /// `fence.proxy.async` (all state spaces).
    All,
    SharedCta,
    SharedCluster,
    Global,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SyncOp {
    /// `bar.sync id[, count]` (`__syncthreads` is `bar.sync 0`).
    BarSync { id: Value, count: Option<Value> },
    /// `bar.arrive id, count`.
    BarArrive { id: Value, count: Value },
    /// `fence.mbarrier_init.release.cluster`: makes barrier inits visible cluster-wide.
    FenceMbarrierInit,
    /// `fence.proxy.async[.space]`: orders generic-proxy writes before async-proxy reads.
    FenceProxyAsync { space: ProxySpace },
    /// `fence.acq_rel.{cta,cluster,gpu,sys}` style thread fence.
    MemBar { scope: MemScope },
    /// `bar.warp.sync mask`: the lanes in `mask` converge, and their memory accesses before it
    /// are ordered before their accesses after it (CUDA's `__syncwarp`).
    WarpSync { mask: Value },
    /// `elect.sync lane|pred, 0xffffffff`: one active lane of the warp gets `true`.
    ElectSync { pred: Reg },
    /// `activemask.b32 dst`: the lanes of the warp executing it together.
    ActiveMask { dst: Reg },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 n` (sm_90a).
    SetMaxNReg { inc: bool, count: u32 },
    /// `mapa.shared::cluster.u32 dst, addr, cta`: the cluster address of `addr` in CTA `cta`.
    Mapa { dst: Reg, addr: Value, cta: Value },
    /// `barrier.cluster.arrive[.release|.relaxed]`.
    ClusterArrive { relaxed: bool },
    /// `barrier.cluster.wait[.acquire]`.
    ClusterWait,
    /// `trap`: abort the kernel (used for device-side assertion failures).
    Trap,
    /// `nanosleep.u32 ns`: suspend the thread for about `ns` nanoseconds (a backoff hint: it
    /// orders nothing and changes nothing another thread can see).
    Nanosleep { ns: Value },
    /// `griddepcontrol.wait`: wait until the grids this one depends on (programmatic
    /// dependent launch) completed and their memory is visible.
    GridDepWait,
    /// `griddepcontrol.launch_dependents`: the dependent grid may be scheduled now.
    GridDepLaunchDependents,
}

/// The scope of a fence, an atomic or an ordered load/store: the threads it orders with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemScope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl MemScope {
    /// Every scope, `.gpu` first: the default where the scope is optional (PTX's own default
    /// for atomics), the registry's choice lists are these.
    pub const ALL: [MemScope; 4] = [MemScope::Gpu, MemScope::Cta, MemScope::Cluster, MemScope::Sys];
    /// The PTX names of [`MemScope::ALL`], in order.
    pub const NAMES: [&'static str; 4] = ["gpu", "cta", "cluster", "sys"];

    pub fn name(self) -> &'static str {
        match self {
            MemScope::Cta => "cta",
            MemScope::Cluster => "cluster",
            MemScope::Gpu => "gpu",
            MemScope::Sys => "sys",
        }
    }

    /// Whether this scope includes two threads `same_cta` / `same_cluster` of one another
    /// (one device: `.gpu` and `.sys` include every thread of the grid).
    pub fn includes(self, same_cta: bool, same_cluster: bool) -> bool {
        match self {
            MemScope::Cta => same_cta,
            MemScope::Cluster => same_cluster,
            MemScope::Gpu | MemScope::Sys => true,
        }
    }
}
