//! The Tensor Memory Accelerator: bulk and bulk-tensor copies between global and shared memory.

use super::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum TmaOp {
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes
    /// [dst], [tmap, {coords}], [bar]` with optional `.multicast::cluster` and L2 hint.
    /// The copy engine performs `complete_tx(bytes of the box)` on `bar` when the data lands.
    LoadTensor {
        dst: Value,
        tmap: Value,
        coords: Vec<Value>,
        bar: Value,
        multicast: Option<Value>,
        cache_hint: Option<Value>,
    },
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [tmap, {coords}], [src]`.
    StoreTensor { tmap: Value, coords: Vec<Value>, src: Value },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar]`.
    LoadBulk { dst: Value, src: Value, bytes: Value, bar: Value },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
    /// [dst], [src], bytes, [bar], cta_mask`: the same bytes into every CTA of `cta_mask` (a
    /// `u16`), at `dst` and completing on `bar` (shared::cta offsets) in each of them.
    LoadBulkMulticast { dst: Value, src: Value, bytes: Value, bar: Value, cta_mask: Value },
    /// `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src],
    /// bytes, [bar]`: this CTA's shared memory into (another) CTA's of the cluster; `dst` and
    /// `bar` are shared::cluster addresses (`mapa`) of the same CTA.
    CopyBulkCluster { dst: Value, src: Value, bytes: Value, bar: Value },
    /// `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes`.
    StoreBulk { dst: Value, src: Value, bytes: Value },
    /// `cp.async.bulk.commit_group`.
    CommitGroup,
    /// `cp.async.bulk.wait_group[.read] n`.
    WaitGroup { n: u32, read: bool },
    /// `cp.async.bulk.prefetch.tensor.Nd.L2.global [tmap, {coords}]`.
    PrefetchTensor { tmap: Value, coords: Vec<Value> },
}

impl TmaOp {
    pub fn rank(&self) -> Option<usize> {
        match self {
            TmaOp::LoadTensor { coords, .. }
            | TmaOp::StoreTensor { coords, .. }
            | TmaOp::PrefetchTensor { coords, .. } => Some(coords.len()),
            _ => None,
        }
    }
}
