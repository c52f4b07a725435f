//! Async operations as data: what a TMA/bulk/cp.async copy, a store or a `tcgen05.commit`
//! does, split into the pieces a load lands in, and the address arithmetic of tensor boxes
//! and swizzles. `agent.rs` executes them.

use crate::tensor_map::{Swizzle, TensorMapDesc};

/// Pieces a load is split into at most.
const PIECES: u32 = 4;

pub enum LoadSrc {
    Bulk(u64),
    /// Shared memory of CTA `cta` at `off` (`cp.async.bulk.shared::cluster.shared::cta`).
    Shared {
        cta: usize,
        off: u32,
    },
    /// Tensor map parameter index and box coordinates (innermost first).
    Tensor {
        map: usize,
        coords: Vec<i32>,
    },
}

impl LoadSrc {
    pub fn what(&self) -> &'static str {
        match self {
            LoadSrc::Bulk(_) => "bulk copy (cp.async.bulk)",
            LoadSrc::Shared { .. } => "CTA-to-CTA bulk copy (cp.async.bulk.shared::cluster.shared::cta)",
            LoadSrc::Tensor { .. } => "TMA tensor load",
        }
    }
}

pub enum StoreDst {
    Bulk(u64),
    Tensor { map: usize, coords: Vec<i32> },
}

/// Where a load writes: CTA, shared offset, and the barrier (in that CTA) it completes tx on.
#[derive(Clone, Copy, Debug)]
pub struct LoadDst {
    pub cta: usize,
    pub off: u32,
    pub bar: u32,
}

pub enum AsyncKind {
    /// Global → shared of `bytes` into each destination (several with multicast). `pieces`:
    /// byte ranges not landed yet; `data`: the source, read when the first piece lands.
    Load { dsts: Vec<LoadDst>, src: LoadSrc, bytes: u32, pieces: Vec<(u32, u32)>, data: Option<Vec<u8>> },
    /// `cp.async` of `bytes` into `(cta, off)`, in the issuer's cp.async group `group`.
    CpAsync { cta: usize, off: u32, src: u64, bytes: u32, group: usize },
    /// Shared → global (TMA store), in the issuer's bulk group `group`.
    Store { cta: usize, off: u32, dst: StoreDst, bytes: u32, group: usize },
    /// `tcgen05.commit`: one arrival on `(cta, off)` once prior tcgen05 work finished.
    Commit { cta: usize, off: u32 },
    /// `cp.async.mbarrier.arrive`: one arrival on `(cta, off)` once the issuer's `cp.async`
    /// ops `after` (those in flight at the arrive) have landed.
    CpAsyncArrive { cta: usize, off: u32, after: Vec<u32> },
    /// A `tcgen05.mma`, `cp` or `shift` the tensor core runs (`umma.rs`).
    Tcgen05(Box<crate::sim::tensor::umma::TcWork>),
    /// A `wgmma.mma_async` of warpgroup `wg` (all four warps issued it); wgmmas of a warpgroup
    /// complete in issue order (`exec_wgmma.rs`).
    Wgmma { wg: usize, mma: Box<crate::sim::tensor::wgmma_state::MmaIssue> },
}

pub struct AsyncOp<S> {
    pub id: u32,
    pub issuer: u32,
    /// The issuer's clock at issue (the checker's).
    pub snapshot: S,
    /// Scheduler round of issue.
    pub round: u64,
    pub pc: u32,
    /// The issuer's loop counters at issue (a finding at its CTA's exit names that iteration).
    pub counters: Vec<u64>,
    pub kind: AsyncKind,
    /// Its name in a step schedule (the issuing warp and how many ops that warp issued before).
    pub actor: crate::report::schedule::Actor,
}

/// Split `bytes` into pieces of a 16-byte multiple.
pub fn pieces(bytes: u32) -> Vec<(u32, u32)> {
    let size = bytes.div_ceil(PIECES).div_ceil(16).max(1) * 16;
    (0..bytes).step_by(size as usize).map(|o| (o, size.min(bytes - o))).collect()
}

/// The swizzled shared address of byte address `a` (CUTLASS `Swizzle<B,4,3>`: the 16-byte
/// chunk index inside a 128-byte row is XORed with the row index modulo 2/4/8).
pub fn swizzle(a: u32, s: Swizzle) -> u32 {
    s.apply(a)
}

/// The global bytes `(addr, len)` spanning every in-bounds element of the box at `coords`
/// (`None`: none is in bounds): each dimension's term of an element's address grows with its
/// coordinate, so the lowest and highest addresses are the sums of each dimension's lowest and
/// highest in-bounds terms. Covers every address `for_box` visits.
#[allow(clippy::needless_range_loop)] // dimension `d` indexes four arrays
pub fn box_global_span(desc: &TensorMapDesc, coords: &[i32]) -> Option<(u64, u64)> {
    let es = desc.dtype.size() as u64;
    let (mut lo, mut hi) = (desc.base, desc.base);
    for d in 0..desc.rank() {
        let first = (coords[d] as i64).max(0);
        let last = (coords[d] as i64 + desc.box_dims[d] as i64).min(desc.dims[d] as i64) - 1;
        if last < first {
            return None;
        }
        let stride = if d == 0 { es } else { desc.strides[d - 1] };
        lo = lo.saturating_add((first as u64).saturating_mul(stride));
        hi = hi.saturating_add((last as u64).saturating_mul(stride));
    }
    Some((lo, hi.saturating_add(es) - lo))
}

/// Visit every element of the box at `coords`: `f(box byte offset, global address or None
/// when out of bounds)`.
#[allow(clippy::needless_range_loop)] // dimension `d` indexes four arrays
pub fn for_box(desc: &TensorMapDesc, coords: &[i32], mut f: impl FnMut(usize, Option<u64>)) {
    let rank = desc.rank();
    let es = desc.dtype.size() as u64;
    let total: u64 = desc.box_dims.iter().map(|&b| b as u64).product();
    let mut idx = vec![0u32; rank];
    for e in 0..total {
        let mut inb = true;
        let mut addr = desc.base;
        for d in 0..rank {
            let c = coords[d] as i64 + idx[d] as i64;
            if c < 0 || c >= desc.dims[d] as i64 {
                inb = false;
                break;
            }
            addr += if d == 0 { c as u64 * es } else { c as u64 * desc.strides[d - 1] };
        }
        f((e * es) as usize, inb.then_some(addr));
        for d in 0..rank {
            idx[d] += 1;
            if idx[d] < desc.box_dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_split_into_at_most_four_16_byte_multiples() {
        assert_eq!(pieces(16), vec![(0, 16)]);
        assert_eq!(pieces(64), vec![(0, 16), (16, 16), (32, 16), (48, 16)]);
        assert_eq!(pieces(4096), vec![(0, 1024), (1024, 1024), (2048, 1024), (3072, 1024)]);
        assert_eq!(pieces(48), vec![(0, 16), (16, 16), (32, 16)]);
        assert_eq!(pieces(100).iter().map(|p| p.1).sum::<u32>(), 100);
    }

    #[test]
    fn swizzle_128b_xors_the_chunk_with_the_row() {
        // Row 0 is unchanged; row 1 swaps chunk pairs; row 7 reverses the 8 chunks.
        assert_eq!(swizzle(0x10, Swizzle::B128), 0x10);
        assert_eq!(swizzle(128, Swizzle::B128), 128 + 16);
        assert_eq!(swizzle(128 + 16, Swizzle::B128), 128);
        assert_eq!(swizzle(7 * 128, Swizzle::B128), 7 * 128 + 7 * 16);
        assert_eq!(swizzle(7 * 128 + 5, Swizzle::B128), 7 * 128 + 7 * 16 + 5, "bytes inside a chunk stay put");
        assert_eq!(swizzle(8 * 128, Swizzle::B128), 8 * 128, "the pattern repeats every 1024 bytes");
        assert_eq!(swizzle(3 * 128 + 16, Swizzle::B64), 3 * 128 + 2 * 16);
        assert_eq!(swizzle(128, Swizzle::B32), 128 + 16);
    }

    #[test]
    fn box_walk_fills_out_of_bounds_elements() {
        let desc = TensorMapDesc {
            dtype: phaser_codegen::Type::U32,
            base: 1000,
            dims: vec![3, 2],
            strides: vec![12],
            box_dims: vec![2, 2],
            swizzle: Swizzle::None,
        };
        let mut seen = Vec::new();
        for_box(&desc, &[2, 1], |o, a| seen.push((o, a)));
        assert_eq!(seen, vec![(0, Some(1000 + 12 + 8)), (4, None), (8, None), (12, None)]);
        assert_eq!(box_global_span(&desc, &[2, 1]), Some((1000 + 12 + 8, 4)), "the one element in bounds");
        assert_eq!(box_global_span(&desc, &[3, 0]), None, "no element in bounds");
        // Every element `for_box` reads lies in the span, and the span's ends are elements.
        for coords in [[0, 0], [1, 0], [-1, 1], [2, -1], [0, 1]] {
            let mut addrs = Vec::new();
            for_box(&desc, &coords, |_, a| addrs.extend(a));
            let span = box_global_span(&desc, &coords);
            let (lo, hi) = (addrs.iter().min().copied(), addrs.iter().max().map(|a| a + 4));
            assert_eq!(span.map(|(a, n)| (a, a + n)), lo.zip(hi), "{coords:?}");
        }
    }
}
