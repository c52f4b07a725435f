//! Blackwell tensor-core (`tcgen05`) ops that interact with mbarriers.

use super::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum Tcgen05Op {
    /// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar]`:
    /// one arrival on `bar` once every prior tcgen05 async op of this thread finished.
    Commit { bar: Value, multicast: Option<Value> },
    /// `tcgen05.fence::before_thread_sync` / `::after_thread_sync`.
    Fence { after: bool },
}
