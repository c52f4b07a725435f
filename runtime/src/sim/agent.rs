//! Async agents: the TMA engine (bulk and tensor copies, multicast, stores with bulk groups),
//! Ampere `cp.async`, and `tcgen05.commit` arrivals. Each op is issued by a thread, sits in
//! flight, and completes when the scheduler says: data lands, then the barrier gets its
//! `complete_tx` (or arrival).

use super::barrier::Actor;
use super::engine::{Engine, StoreRead};
use super::finding::Category;
use crate::error::Result;
use crate::tensor_map::{Swizzle, TensorMapDesc};

pub enum LoadSrc {
    Bulk(u64),
    /// Tensor map parameter index and box coordinates (innermost first).
    Tensor {
        map: usize,
        coords: Vec<i32>,
    },
}

pub enum StoreDst {
    Bulk(u64),
    Tensor { map: usize, coords: Vec<i32> },
}

pub enum AsyncKind {
    /// Global → shared of `bytes`, into each `(cta, smem offset, barrier offset)` (several
    /// with multicast); each destination's barrier gets `complete_tx(bytes)`.
    Load { dsts: Vec<(usize, u32, u32)>, src: LoadSrc, bytes: u32 },
    /// `cp.async` of `bytes` into `(cta, off)`, in the issuer's cp.async group `group`.
    CpAsync { cta: usize, off: u32, src: u64, bytes: u32, group: usize },
    /// Shared → global (TMA store), in the issuer's bulk group `group`.
    Store { cta: usize, off: u32, dst: StoreDst, bytes: u32, group: usize },
    /// `tcgen05.commit`: one arrival on `(cta, off)` once prior tcgen05 work finished.
    Commit { cta: usize, off: u32 },
    /// `cp.async.mbarrier.arrive`: one arrival on `(cta, off)` once the issuer's `cp.async`
    /// ops `after` (those in flight at the arrive) have landed.
    CpAsyncArrive { cta: usize, off: u32, after: Vec<u32> },
}

pub struct AsyncOp {
    pub id: u32,
    pub issuer: u32,
    /// The issuer's own clock at issue, and its whole vector clock then.
    pub issue_clock: u32,
    pub vc: Vec<u32>,
    /// Scheduler round of issue.
    pub round: u64,
    pub pc: u32,
    pub kind: AsyncKind,
}

/// The swizzled shared address of byte address `a` (CUTLASS `Swizzle<B,4,3>`: the 16-byte
/// chunk index inside a 128-byte row is XORed with the row index modulo 2/4/8).
pub fn swizzle(a: u32, s: Swizzle) -> u32 {
    let m = match s {
        Swizzle::None => return a,
        Swizzle::B32 => 1,
        Swizzle::B64 => 3,
        Swizzle::B128 => 7,
    };
    a ^ (((a >> 7) & m) << 4)
}

/// Visit every element of the box at `coords`: `f(box byte offset, global address or None
/// when out of bounds)`.
fn for_box(desc: &TensorMapDesc, coords: &[i32], mut f: impl FnMut(usize, Option<u64>)) {
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

impl Engine<'_> {
    pub fn complete_op(&mut self, op: AsyncOp) -> Result<()> {
        self.out.stats.async_completed += 1;
        self.futile = 0;
        let AsyncOp { id, issuer, issue_clock, vc, pc, kind, .. } = op;
        let icta = (issuer / self.tpc) as usize;
        match kind {
            AsyncKind::Load { dsts, src, bytes } => {
                let (data, swz) = match &src {
                    LoadSrc::Bulk(a) => (self.gmem.slice(*a, bytes as usize).map(|s| s.to_vec()), Swizzle::None),
                    LoadSrc::Tensor { map, coords } => {
                        let desc = self.tmaps[*map].as_ref().expect("tensor map");
                        let es = desc.dtype.size() as usize;
                        let mut buf = vec![0u8; bytes as usize];
                        let mut oob = None;
                        let gmem = &*self.gmem;
                        for_box(desc, coords, |o, a| {
                            if let Some(a) = a {
                                match gmem.slice(a, es) {
                                    Some(s) => buf[o..o + es].copy_from_slice(s),
                                    None => oob = Some(a),
                                }
                            }
                        });
                        match oob {
                            Some(a) => {
                                let msg = format!(
                                    "TMA load: the tensor map's element at {} is outside every buffer (bad base, dims or strides)",
                                    self.gmem.describe(a)
                                );
                                self.finding(Category::OutOfBounds, icta, Some(issuer), None, Some(pc), msg);
                                self.abort = true;
                                (None, desc.swizzle)
                            }
                            None => (Some(buf), desc.swizzle),
                        }
                    }
                };
                let Some(data) = data else { return Ok(()) };
                for (c, off, boff) in dsts {
                    let smem = &mut self.ctas[c].smem;
                    if swz == Swizzle::None {
                        smem[off as usize..(off + bytes) as usize].copy_from_slice(&data);
                    } else {
                        for k in (0..bytes).step_by(16) {
                            let p = swizzle(off + k, swz) as usize;
                            let n = 16.min(bytes - k) as usize;
                            if p + n <= smem.len() {
                                smem[p..p + n].copy_from_slice(&data[k as usize..k as usize + n]);
                            }
                        }
                    }
                    // The data is published by the barrier phase this copy completes tx on: a
                    // reader must have observed that phase (directly or through a release chain).
                    let publisher = match (self.bar_component(c, boff), self.ctas[c].barriers.get(&boff)) {
                        (Some(comp), Some(b)) => (comp as u32, b.phase as u32 + 1),
                        _ => (issuer, issue_clock),
                    };
                    self.async_land(c, off, bytes, id, publisher.0, publisher.1);
                    if self.ctas[c].barriers.get(&boff).is_some_and(|b| b.usable()) {
                        let actor = Actor::Agent { kind: "TMA load", issuer };
                        self.complete_tx_on(issuer, c, boff, bytes, actor, Some(&vc), pc);
                    } else {
                        let msg = "a TMA load landed but its barrier is not initialized (or was invalidated)".into();
                        self.finding(Category::Uninitialized, c, Some(issuer), Some((c, boff)), Some(pc), msg);
                    }
                }
            }
            AsyncKind::CpAsync { cta, off, src, bytes, group } => {
                if let Some(s) = self.gmem.slice(src, bytes as usize) {
                    let s = s.to_vec();
                    self.ctas[cta].smem[off as usize..(off + bytes) as usize].copy_from_slice(&s);
                }
                self.async_land(cta, off, bytes, id, issuer, issue_clock);
                let a = &mut self.aux[issuer as usize];
                if group < a.cp_groups.len() {
                    a.cp_groups[group] -= 1;
                } else {
                    a.cp_open -= 1;
                }
            }
            AsyncKind::Store { cta, off, dst, bytes, group } => {
                let data = self.ctas[cta].smem[off as usize..(off + bytes) as usize].to_vec();
                match dst {
                    StoreDst::Bulk(a) => {
                        if let Some(s) = self.gmem.slice_mut(a, bytes as usize) {
                            s.copy_from_slice(&data);
                        }
                    }
                    StoreDst::Tensor { map, coords } => {
                        let desc = self.tmaps[map].as_ref().expect("tensor map");
                        let es = desc.dtype.size() as usize;
                        let swz = desc.swizzle;
                        let mut writes = Vec::new();
                        for_box(desc, &coords, |o, a| {
                            if let Some(a) = a {
                                let p = if swz == Swizzle::None {
                                    o
                                } else {
                                    (swizzle(off + o as u32, swz) - off) as usize
                                };
                                writes.push((a, p));
                            }
                        });
                        for (a, p) in writes {
                            let smem = &self.ctas[cta].smem;
                            let base = off as usize + p;
                            let src: Vec<u8> = smem.get(base..base + es).map(|s| s.to_vec()).unwrap_or_default();
                            match self.gmem.slice_mut(a, es) {
                                Some(d) if src.len() == es => d.copy_from_slice(&src),
                                _ => {
                                    let msg = format!("TMA store to {} is out of bounds", self.gmem.describe(a));
                                    self.finding(Category::OutOfBounds, icta, Some(issuer), None, Some(pc), msg);
                                    self.abort = true;
                                    break;
                                }
                            }
                        }
                    }
                }
                // The source stays marked as read by the store until its issuer observes the
                // completion (`wait_group`): only then may anyone ordered after it rewrite it.
                if self.cfg.race_check {
                    let read = StoreRead { group, cta, off, len: bytes, op: id };
                    self.aux[issuer as usize].unobserved_stores.push(read);
                }
                let a = &mut self.aux[issuer as usize];
                if group < a.bulk_groups.len() {
                    a.bulk_groups[group] -= 1;
                } else {
                    a.bulk_open -= 1;
                }
            }
            AsyncKind::Commit { cta, off } => {
                if self.ctas[cta].barriers.get(&off).is_some_and(|b| b.usable()) {
                    let actor = Actor::Agent { kind: "tcgen05.commit", issuer };
                    self.arrive_on(issuer, cta, off, 1, false, actor, Some(&vc), pc);
                }
            }
            AsyncKind::CpAsyncArrive { cta, off, .. } => {
                if self.ctas[cta].barriers.get(&off).is_some_and(|b| b.usable()) {
                    let actor = Actor::Agent { kind: "cp.async.mbarrier.arrive", issuer };
                    self.arrive_on(issuer, cta, off, 1, false, actor, Some(&vc), pc);
                } else {
                    let msg =
                        "a cp.async.mbarrier.arrive fired but its barrier is not initialized (or was invalidated)";
                    self.finding(Category::Uninitialized, cta, Some(issuer), Some((cta, off)), Some(pc), msg.into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
