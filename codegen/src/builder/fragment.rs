//! Register fragments: the f32 accumulator of a warpgroup's 64 x N wgmma tile, held as
//! `N / 2` individual virtual registers per thread, and the ops that get it out (pack to
//! bf16/f16 pairs, `stmatrix`, vector stores), with swizzled shared-tile addressing.
//! Which element each register holds is `arch::fragment`'s (the PTX ISA's D and A layouts);
//! the ops that work element by element (coordinates, row reductions, masks, the
//! accumulator as the next wgmma's A) are in `builder/fragment_ops.rs`.

use super::kernel_builder::KernelBuilder;
use crate::arch::wgmma;
use crate::ir::*;

/// Threads in a warpgroup.
pub use crate::arch::wgmma::WARPGROUP_THREADS;

/// A warpgroup's 64 x `n` f32 accumulator: register `i` of every thread (see the module
/// docs for which element it holds). Indexing is at compile time: `regs[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    pub n: u32,
    pub regs: Vec<Reg>,
}

impl Accumulator {
    /// `n / 2` fresh f32 registers (not initialized: [`Accumulator::zero`] them, or let the
    /// first wgmma overwrite them with scale-d = false). `n` is a wgmma N
    /// ([`wgmma::n_problem`]).
    #[track_caller]
    pub fn new(k: &mut KernelBuilder, n: u32) -> Accumulator {
        if let Some(rule) = wgmma::n_problem(n) {
            k.error(format!("an accumulator of {} x {n}: {rule}", wgmma::M));
        }
        let regs = (0..wgmma::accumulator_len(n)).map(|_| k.new_reg(Type::F32)).collect();
        Accumulator { n, regs }
    }

    pub fn len(&self) -> usize {
        self.regs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.regs.is_empty()
    }

    /// Register `i` as an operand.
    pub fn get(&self, i: usize) -> Value {
        Value::Reg(self.regs[i])
    }

    /// Set every element to 0.
    #[track_caller]
    pub fn zero(&self, k: &mut KernelBuilder) {
        k.at_caller(|k| {
            for &r in &self.regs {
                k.assign(r, Value::f32(0.0));
            }
        })
    }

    /// The packed bf16 pair of registers `i` and `i + 1` (`i` even): the element at the lower
    /// column in the low half.
    #[track_caller]
    pub fn pack_bf16(&self, k: &mut KernelBuilder, i: usize) -> Value {
        if !i.is_multiple_of(2) || i + 1 >= self.regs.len() {
            k.error(format!("pack_bf16({i}): pairs start at an even register below {}", self.regs.len()));
            return Value::imm_u(0, Type::B32);
        }
        k.pack_half2(self.get(i), self.get(i + 1), Type::BF16)
    }

    /// Store columns `[col0, col0 + cols)` of the accumulator (rounded to bf16) into a bf16
    /// shared tile at (`row0`, `tile_col0`), with one `stmatrix.x4` per 16 columns per warp.
    /// `tile` is the layout of the destination (any swizzle), `base` its shared address
    /// (aligned to [`SmemTile::align`]), `t` the thread's index in the warpgroup (0..128).
    /// `col0` and `cols` are multiples of 16. All 128 threads must make the call.
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub fn store_bf16_stmatrix(
        &self,
        k: &mut KernelBuilder,
        tile: &SmemTile,
        base: Value,
        t: Value,
        row0: u32,
        tile_col0: u32,
        col0: u32,
        cols: u32,
    ) {
        if !col0.is_multiple_of(16) || !cols.is_multiple_of(16) || col0 + cols > self.n {
            k.error(format!(
                "storing accumulator columns [{col0}, {}) of {}: offsets and widths are multiples of 16",
                col0 + cols,
                self.n
            ));
            return;
        }
        if tile.elem_bytes != 2 || row0 + 64 > tile.rows || tile_col0 + cols > tile.cols {
            k.error(format!(
                "a 64 x {cols} bf16 block at ({row0}, {tile_col0}) does not fit the {} x {} tile of {}-byte elements",
                tile.rows, tile.cols, tile.elem_bytes
            ));
            return;
        }
        k.at_caller(|k| {
            // Thread t gives the row address of matrix (l / 8): rows 0-7 / 8-15 of its warp's
            // band alternate, the second 8 columns follow (matrices 2 and 3).
            let w = k.shr(t, Value::u32(5));
            let l = k.and(t, Value::u32(31));
            let band = k.mul(w, Value::u32(16));
            let r8 = k.and(l, Value::u32(7));
            let half = k.shr(l, Value::u32(3));
            let half = k.and(half, Value::u32(1));
            let half = k.mul(half, Value::u32(8));
            let row = k.add(band, r8);
            let row = k.add(row, half);
            let row = k.add(row, Value::u32(row0));
            let upper = k.shr(l, Value::u32(4));
            let upper = k.mul(upper, Value::u32(8));
            for c in 0..cols / 16 {
                let g = ((col0 + 16 * c) / 8) as usize; // first column group (8 wide)
                let regs = [
                    self.pack_bf16(k, 4 * g),
                    self.pack_bf16(k, 4 * g + 2),
                    self.pack_bf16(k, 4 * g + 4),
                    self.pack_bf16(k, 4 * g + 6),
                ];
                let col = k.add(upper, Value::u32(tile_col0 + 16 * c));
                let addr = k.smem_tile_addr(tile, base, row, col);
                k.stmatrix(addr, &regs, false);
            }
        })
    }
}

impl KernelBuilder {
    /// `cvt.rn.{bf16x2,f16x2}.f32`: round `lo` and `hi` to `to` (bf16 or f16) and pack them
    /// in one `b32`, `lo` in the low half.
    #[track_caller]
    pub fn pack_half2(&mut self, lo: Value, hi: Value, to: Type) -> Value {
        let dst = self.new_reg(Type::B32);
        let as_f32 = |v: Value| match v {
            Value::Imm { ty, .. } if ty.is_int() => super::arith::retype_imm(v, Type::F32),
            _ => v,
        };
        if let (Value::Imm { bits: l, ty: Type::F32 }, Value::Imm { bits: h, ty: Type::F32 }, Type::BF16 | Type::F16) =
            (as_f32(lo), as_f32(hi), to)
        {
            // Two constants: the evaluator's pair, moved (ptxas would fold the `cvt` of an
            // immediate by its own NaN rules).
            let bits = crate::eval::cvt(l, Type::F32, to) | crate::eval::cvt(h, Type::F32, to) << 16;
            self.push(ArithOp::Mov { dst, src: Value::Imm { bits, ty: Type::B32 } });
            return Value::Reg(dst);
        }
        self.push(FragmentOp::PackHalf2 { dst, hi, lo, to });
        Value::Reg(dst)
    }

    /// [`KernelBuilder::pack_half2`] as a `u32` (the DSL's type of a packed pair).
    #[track_caller]
    pub fn pack_half2_u32(&mut self, lo: Value, hi: Value, to: Type) -> Value {
        let packed = self.pack_half2(lo, hi, to);
        let dst = self.new_reg(Type::U32);
        self.push(ArithOp::Mov { dst, src: packed });
        Value::Reg(dst)
    }

    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`: round `lo` and `hi` to `to` (e4m3 or e5m2;
    /// nearest even, saturating to the largest finite value, NaN stays NaN) and pack them in
    /// one `b16`, `lo` in the low byte.
    #[track_caller]
    pub fn pack_fp8x2(&mut self, lo: Value, hi: Value, to: Type) -> Value {
        let dst = self.new_reg(Type::B16);
        self.push(FragmentOp::PackFp8x2 { dst, hi, lo, to });
        Value::Reg(dst)
    }

    /// [`KernelBuilder::pack_fp8x2`] as a `u16` (the DSL's type of a packed FP8 pair: two
    /// bytes of an FP8 buffer).
    #[track_caller]
    pub fn pack_fp8x2_u16(&mut self, lo: Value, hi: Value, to: Type) -> Value {
        let packed = self.pack_fp8x2(lo, hi, to);
        let dst = self.new_reg(Type::U16);
        self.push(ArithOp::Mov { dst, src: packed });
        Value::Reg(dst)
    }

    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared::cta.b16 [addr], {regs}`: the warp
    /// stores `regs.len()` 8x8 matrices of 16-bit elements; `addr` is this thread's row
    /// address (threads `8i..8i+7` address the rows of matrix `i`), 16-byte aligned.
    #[track_caller]
    pub fn stmatrix(&mut self, addr: Value, regs: &[Value], trans: bool) {
        self.push(FragmentOp::StMatrix { addr, regs: regs.to_vec(), trans });
    }

    /// `st.{space}.v{2,4}` of `srcs` (same type) at `addr + offset` (a raw address; typed
    /// arrays: [`KernelBuilder::st_vec_at`]).
    #[track_caller]
    pub fn st_vec(&mut self, space: Space, addr: Value, offset: i32, srcs: &[Value]) {
        let ty = srcs.first().map(|v| v.ty()).unwrap_or(Type::B32);
        self.push(MemoryOp::StVec { space, ty, addr, offset, srcs: srcs.to_vec() });
    }

    /// The two halves of a packed bf16/f16 pair (`from`) as f32s: `[lo, hi]` (exact).
    #[track_caller]
    pub fn unpack_half2(&mut self, src: Value, from: Type) -> [Value; 2] {
        let (lo, hi) = (self.new_reg(Type::F32), self.new_reg(Type::F32));
        self.push(FragmentOp::UnpackHalf2 { lo, hi, src, from });
        [Value::Reg(lo), Value::Reg(hi)]
    }

    /// `ldmatrix.sync.aligned.m8n8.x{n}{.trans}.shared::cta.b16`: the warp loads `n` (1, 2 or
    /// 4) 8x8 matrices of 16-bit elements; `addr` is this thread's row address (threads
    /// `8i..8i+7` address the rows of matrix `i`), 16-byte aligned. Every lane of the warp
    /// must make the call. Returns one `b32` (two elements) per matrix.
    #[track_caller]
    pub fn ldmatrix(&mut self, addr: Value, n: u32, trans: bool) -> Vec<Value> {
        let dsts: Vec<Reg> = (0..n).map(|_| self.new_reg(Type::U32)).collect();
        self.push(FragmentOp::LdMatrix { dsts: dsts.clone(), addr, trans });
        dsts.into_iter().map(Value::Reg).collect()
    }

    /// The shared address of element (`row`, `col`) of `tile` at `base`: the unswizzled
    /// offset (block, row, column) with the tile's swizzle applied, as TMA lays it out
    /// ([`SmemTile::offset`] computed at run time).
    #[track_caller]
    pub fn smem_tile_addr(&mut self, tile: &SmemTile, base: Value, row: Value, col: Value) -> Value {
        if let Some(p) = tile.problem() {
            self.error(format!("shared tile: {p}"));
        }
        self.at_caller(|k| {
            // Blocks are a power of two wide (swizzle row / element size): shift and mask.
            let bc = tile.block_cols().max(1);
            let block = k.shr(col, Value::u32(bc.trailing_zeros()));
            let in_block = k.and(col, Value::u32(bc - 1));
            let off = k.mul(block, Value::u32(tile.block_bytes()));
            let off = k.mad(row, Value::u32(tile.row_bytes()), off);
            let off = k.mad(in_block, Value::u32(tile.elem_bytes), off);
            let bits = tile.swizzle.xor_bits();
            let off = if bits > 0 {
                let x = k.shr(off, Value::u32(3));
                let x = k.and(x, Value::u32(((1 << bits) - 1) << 4));
                k.xor(off, x)
            } else {
                off
            };
            k.add(base, off)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;
    use crate::ptx_text::{count, find_all, has};

    #[test]
    fn stmatrix_epilogue_packs_pairs_low_first() {
        let mut k = KernelBuilder::new("epi", Target::Sm90a);
        k.require_block(128, 1, 1);
        let tile = SmemTile::new(2, 64, 64, Swizzle::B128);
        let s = k.alloc_shared_aligned("c", Type::BF16, tile.bytes() / 2, 1024);
        let base = k.shared_base_addr(s);
        let acc = Accumulator::new(&mut k, 64);
        acc.zero(&mut k);
        let t = k.thread_idx(Dim::X);
        acc.store_bf16_stmatrix(&mut k, &tile, base, t, 0, 0, 0, 64);
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        assert_eq!(
            count(&ptx, "stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [%r*], {%r*, %r*, %r*, %r*}"),
            4,
            "{ptx}"
        );
        let cvts = find_all(&ptx, "cvt.rn.bf16x2.f32");
        assert_eq!(cvts.len(), 16);
        // hi first: register 1 above register 0.
        let f0 = acc.regs[0].id;
        assert!(cvts[0].matches(&format!("cvt.rn.bf16x2.f32 %r*, %f{}, %f{f0}", f0 + 1)), "{}", cvts[0]);
        // The 128-byte swizzle: xor with bits 4-6 taken from bits 7-9.
        assert!(has(&ptx, "and.b32 %r*, %r*, 112") && has(&ptx, "xor.b32 %r*, %r*, %r*"), "{ptx}");
    }

    #[test]
    fn fragment_misuse_is_reported() {
        let mut k = KernelBuilder::new("bad", Target::Sm90a);
        let acc = Accumulator::new(&mut k, 20);
        let tile = SmemTile::new(2, 64, 64, Swizzle::B128);
        let acc2 = Accumulator::new(&mut k, 64);
        acc2.store_bf16_stmatrix(&mut k, &tile, Value::u32(0), Value::u32(0), 0, 0, 8, 16);
        let _ = acc;
        let e = k.finish().unwrap_err();
        assert!(e.diagnostics[0].message.contains("multiple of 8 in 8..=256"), "{e}");
        assert!(e.diagnostics[1].message.contains("multiples of 16"), "{e}");
    }
}
