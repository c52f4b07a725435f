//! TMA: bulk and bulk-tensor copies, prefetches and bulk groups.

ops! {
    /// TMA load of a box into shared `dst`, completing tx bytes on `bar`
    "ptx.cp_async.bulk.tensor.g2s" ["gluon:tma.async_copy_global_to_shared"] (dst: U32, tmap: TensorMap, coords: Coords, bar: Barrier) -> Unit
        = |k, call| k.tma_load(dst, tmap, &coords, bar);
    /// TMA load multicast to the CTAs of `cta_mask`
    "ptx.cp_async.bulk.tensor.g2s_multicast" (dst: U32, tmap: TensorMap, coords: Coords, bar: Barrier, cta_mask: Int = 3) -> Unit
        = |k, call| k.tma_load_multicast(dst, tmap, &coords, bar, cta_mask);
    /// TMA load with an L2 cache policy
    "ptx.cp_async.bulk.tensor.g2s_hint" (dst: U32, tmap: TensorMap, coords: Coords, bar: Barrier, policy: U64) -> Unit
        = |k, call| k.tma_load_hinted(dst, tmap, &coords, bar, policy);
    /// TMA store of shared `src` to the box at `coords`
    "ptx.cp_async.bulk.tensor.s2g" ["gluon:tma.async_copy_shared_to_global"] (tmap: TensorMap, coords: Coords, src: U32) -> Unit
        = |k, call| k.tma_store(tmap, &coords, src);
    /// prefetch a box into L2
    "ptx.cp_async.bulk.prefetch.tensor" (tmap: TensorMap, coords: Coords) -> Unit = |k, call| k.tma_prefetch(tmap, &coords);
    /// bulk copy global → shared (multiple of 16 bytes), completing on `bar`
    "ptx.cp_async.bulk.g2s" (dst: U32, src: U64, bytes: U32 = 256, bar: Barrier) -> Unit
        = |k, call| k.bulk_load(dst, src, bytes, bar);
    /// bulk copy global → shared into every CTA of `cta_mask` (same offsets), each completing on its own `bar`
    "ptx.cp_async.bulk.g2s_multicast" (dst: U32, src: U64, bytes: U32 = 256, bar: Barrier, cta_mask: Int = 3) -> Unit
        = |k, call| k.bulk_load_multicast(dst, src, bytes, bar, cta_mask);
    /// bulk copy of this CTA's shared `src` to shared::cluster `dst`, completing on `rbar` in that CTA
    "ptx.cp_async.bulk.s2cluster" (dst: U32, src: U32, bytes: U32 = 256, rbar: RemoteBarrier) -> Unit
        = |k, call| k.bulk_copy_to_cluster(dst, src, bytes, rbar);
    /// bulk copy shared → global
    "ptx.cp_async.bulk.s2g" (dst: U64, src: U32, bytes: U32 = 256) -> Unit = |k, call| k.bulk_store(dst, src, bytes);
    /// `cp.async.bulk.commit_group`
    "ptx.cp_async.bulk.commit_group" ["cute:tma_store_arrive"] () -> Unit = |k, call| k.bulk_commit_group();
    /// wait until at most `n` bulk groups are pending
    "ptx.cp_async.bulk.wait_group" ["gluon:tma.store_wait"] (n: Const) -> Unit = |k, call| k.bulk_wait_group(n, false);
    /// ... until their sources were read
    "ptx.cp_async.bulk.wait_group_read" ["cute:tma_store_wait"] (n: Const) -> Unit = |k, call| k.bulk_wait_group(n, true);
}
