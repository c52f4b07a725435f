//! TMA: bulk and bulk-tensor copies, prefetches and bulk groups.

use super::handles::*;
use super::kernel_builder::KernelBuilder;
use crate::arch::limits::tma_inner_coord_problem;
use crate::ir::*;

/// How [`tma_inner_coord_problem`] starts (to report one per line).
const INNER_COORD: &str = "the innermost tensor coordinate";

impl KernelBuilder {
    #[track_caller]
    fn coords_u32(&mut self, tmap: TensorMapRef, coords: &[Value]) -> Vec<Value> {
        if coords.len() != tmap.rank as usize {
            self.error(format!("the tensor map has rank {} but {} coordinates were given", tmap.rank, coords.len()));
        }
        let coords: Vec<Value> = coords
            .iter()
            .map(|&c| match c {
                Value::Imm { .. } => self.imm_as("a tensor coordinate", c, Type::S32),
                Value::Reg(r) if r.ty.is_int() && r.ty.size() == 4 => c,
                _ => {
                    self.error(format!("a tensor coordinate must be a 32-bit integer, found {}", c.ty()));
                    c
                }
            })
            .collect();
        // A constant inner coordinate of a map whose element type is known (declared, or
        // implied by a typed tile) is checked now; a runtime one is the simulator's to report.
        let elem = self.map_elem(tmap);
        if let (Some(inner), Some(elem)) = (coords.first().and_then(|c| c.as_imm_i128()), elem) {
            if let Some(p) = tma_inner_coord_problem(inner as i64, elem) {
                // A wide tile's column blocks are copies of their own at the same line: one error.
                let loc = Some(self.here());
                let said = |d: &crate::error::Diagnostic| d.loc == loc && d.message.starts_with(INNER_COORD);
                if !self.errors.iter().any(said) {
                    self.error(p);
                }
            }
        }
        coords
    }

    /// TMA load of the box at `coords` into shared `dst`; completes `tx` bytes on `bar`.
    #[track_caller]
    pub fn tma_load(&mut self, dst: Value, tmap: TensorMapRef, coords: &[Value], bar: Barrier) {
        let coords = self.coords_u32(tmap, coords);
        self.push(TmaOp::LoadTensor { dst, tmap: tmap.addr, coords, bar: bar.addr, multicast: None, cache_hint: None });
    }

    /// TMA load multicast to every CTA in `cta_mask` (same smem offset and barrier offset in each).
    #[track_caller]
    pub fn tma_load_multicast(
        &mut self,
        dst: Value,
        tmap: TensorMapRef,
        coords: &[Value],
        bar: Barrier,
        cta_mask: Value,
    ) {
        let coords = self.coords_u32(tmap, coords);
        let mask = match cta_mask {
            Value::Imm { .. } => self.imm_as("a multicast CTA mask", cta_mask, Type::U16),
            Value::Reg(r) if r.ty == Type::U16 || r.ty == Type::B16 => cta_mask,
            _ => self.cvt(cta_mask, Type::U16),
        };
        self.push(TmaOp::LoadTensor {
            dst,
            tmap: tmap.addr,
            coords,
            bar: bar.addr,
            multicast: Some(mask),
            cache_hint: None,
        });
    }

    /// TMA load with an L2 cache-policy hint (a 64-bit `createpolicy` value).
    #[track_caller]
    pub fn tma_load_hinted(&mut self, dst: Value, tmap: TensorMapRef, coords: &[Value], bar: Barrier, policy: Value) {
        let coords = self.coords_u32(tmap, coords);
        self.push(TmaOp::LoadTensor {
            dst,
            tmap: tmap.addr,
            coords,
            bar: bar.addr,
            multicast: None,
            cache_hint: Some(policy),
        });
    }

    /// TMA store of shared `src` to the box at `coords` (completes through bulk groups).
    #[track_caller]
    pub fn tma_store(&mut self, tmap: TensorMapRef, coords: &[Value], src: Value) {
        let coords = self.coords_u32(tmap, coords);
        self.push(TmaOp::StoreTensor { tmap: tmap.addr, coords, src });
    }

    #[track_caller]
    pub fn tma_prefetch(&mut self, tmap: TensorMapRef, coords: &[Value]) {
        let coords = self.coords_u32(tmap, coords);
        self.push(TmaOp::PrefetchTensor { tmap: tmap.addr, coords });
    }

    /// Plain bulk copy global → shared of `bytes` (multiple of 16), completing on `bar`.
    #[track_caller]
    pub fn bulk_load(&mut self, dst: Value, src: Value, bytes: Value, bar: Barrier) {
        let bytes = self.imm_as("a bulk copy size", bytes, Type::U32);
        self.push(TmaOp::LoadBulk { dst, src, bytes, bar: bar.addr });
    }

    /// Bulk copy global → shared into every CTA of `cta_mask` (the same `dst` offset, each
    /// CTA completing the bytes on its own copy of `bar`).
    #[track_caller]
    pub fn bulk_load_multicast(&mut self, dst: Value, src: Value, bytes: Value, bar: Barrier, cta_mask: Value) {
        let bytes = super::arith::retype_imm(bytes, Type::U32);
        let cta_mask = match cta_mask {
            Value::Imm { .. } => super::arith::retype_imm(cta_mask, Type::U16),
            Value::Reg(r) if r.ty == Type::U16 || r.ty == Type::B16 => cta_mask,
            _ => self.cvt(cta_mask, Type::U16),
        };
        self.push(TmaOp::LoadBulkMulticast { dst, src, bytes, bar: bar.addr, cta_mask });
    }

    /// Bulk copy of `bytes` (multiple of 16) of this CTA's shared memory at `src` to `dst` in
    /// a CTA of the cluster, completing the bytes on `bar` there (`dst` and `bar`: mapped
    /// into the same CTA with `mapa`).
    #[track_caller]
    pub fn bulk_copy_to_cluster(&mut self, dst: Value, src: Value, bytes: Value, bar: RemoteBarrier) {
        let bytes = super::arith::retype_imm(bytes, Type::U32);
        self.push(TmaOp::CopyBulkCluster { dst, src, bytes, bar: bar.addr });
    }

    #[track_caller]
    pub fn bulk_store(&mut self, dst: Value, src: Value, bytes: Value) {
        let bytes = self.imm_as("a bulk copy size", bytes, Type::U32);
        self.push(TmaOp::StoreBulk { dst, src, bytes });
    }

    #[track_caller]
    pub fn bulk_commit_group(&mut self) {
        self.push(TmaOp::CommitGroup);
    }

    /// Wait until at most `n` bulk groups are pending (`read`: only until their sources were read).
    #[track_caller]
    pub fn bulk_wait_group(&mut self, n: u32, read: bool) {
        self.push(TmaOp::WaitGroup { n, read });
    }
}
