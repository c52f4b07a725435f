//! Element-wise work on a wgmma accumulator, by (row, col) in its 64 x N tile, without lane
//! arithmetic in the kernel: the coordinates of each register (CuTe's `partition_C` of an
//! identity tensor), reductions over a row (the 4 threads that share it), masks against a
//! column bound or the causal diagonal, and the accumulator rounded into the A fragments of
//! the next `wgmma.mma_async` with A from registers (FlashAttention's P).
//!
//! Every coordinate is `arch::fragment`'s: the thread's origin, computed once per op from
//! `%tid.x % 128` (warpgroups are 128 consecutive threads of a 1-D block), plus each
//! register's compile-time offset.

use super::kernel_builder::KernelBuilder;
use super::registers::RegisterArray;
use crate::arch::fragment::{self, A_COLS, A_PARTS, A_REGS, COLS_PER_THREAD, ROWS_PER_THREAD};
use crate::arch::fragment::{ROW_LANE_MASKS, THREADS_PER_ROW, WARP_ROWS};
use crate::arch::wgmma::WARPGROUP_THREADS;
use crate::ir::*;

/// Which threads a row reduction combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowScope {
    /// The whole row: this thread's elements, then the 4 threads of the row (`shfl.bfly`).
    Row,
    /// This thread's elements of the row only (FlashAttention's running sum, reduced across
    /// the row once at the end with [`KernelBuilder::quad_reduce`]).
    Thread,
}

/// How a row reduction combines two values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOp {
    Max,
    Sum,
}

impl RowOp {
    fn bin(self) -> BinOp {
        match self {
            RowOp::Max => BinOp::Max,
            RowOp::Sum => BinOp::Add,
        }
    }
}

impl KernelBuilder {
    /// This thread's origin in the accumulator tile (`arch::fragment::thread_origin` at run
    /// time): `(row, col)` as u32.
    #[track_caller]
    pub fn fragment_origin(&mut self) -> (Value, Value) {
        self.at_caller(|k| {
            let tid = k.thread_idx(Dim::X);
            let t = k.rem(tid, Value::u32(WARPGROUP_THREADS));
            let warp = k.div(t, Value::u32(32));
            let lane = k.rem(t, Value::u32(32));
            let quad = k.div(lane, Value::u32(THREADS_PER_ROW));
            let row = k.mad(warp, Value::u32(WARP_ROWS), quad);
            let in_quad = k.rem(lane, Value::u32(THREADS_PER_ROW));
            let col = k.mul(in_quad, Value::u32(COLS_PER_THREAD));
            (row, col)
        })
    }

    /// `acc` as a wgmma accumulator (an f32 array of `N / 2`, N a wgmma N), or a build error.
    #[track_caller]
    fn fragment_accumulator(&mut self, acc: RegisterArray) -> Option<super::Accumulator> {
        let view = self.mma_accumulator(acc)?;
        if let Some(rule) = crate::arch::wgmma::accumulator_problem(view.len() as u32) {
            self.arg_error("acc", rule);
            return None;
        }
        Some(view)
    }

    /// The accumulator view of `acc` and register `i`'s index, or a build error.
    #[track_caller]
    fn fragment_register(&mut self, acc: RegisterArray, i: u32) -> Option<u32> {
        let acc = self.fragment_accumulator(acc)?;
        if i >= acc.len() as u32 {
            self.arg_error("i", format!("register {i} of a 64 x {} accumulator, which has {}", acc.n, acc.len()));
            return None;
        }
        Some(i)
    }

    /// The row (0..64) in the accumulator tile of this thread's register `i` of `acc`.
    #[track_caller]
    pub fn fragment_row(&mut self, acc: RegisterArray, i: u32) -> Value {
        let Some(i) = self.fragment_register(acc, i) else { return Value::u32(0) };
        let (row, _) = self.fragment_origin();
        self.at_caller(|k| k.add(row, Value::u32(fragment::d_register_offset(i).0)))
    }

    /// The column (0..N) in the accumulator tile of this thread's register `i` of `acc`.
    #[track_caller]
    pub fn fragment_col(&mut self, acc: RegisterArray, i: u32) -> Value {
        let Some(i) = self.fragment_register(acc, i) else { return Value::u32(0) };
        let (_, col) = self.fragment_origin();
        self.at_caller(|k| k.add(col, Value::u32(fragment::d_register_offset(i).1)))
    }

    /// `per_row[h]` for the row half `h` that register `i` of `acc` lies in: a per-row value
    /// (a running max, a rescale factor) applied to one register, chosen when the kernel is
    /// built (no instruction).
    #[track_caller]
    pub fn fragment_of_row(&mut self, acc: RegisterArray, i: u32, per_row: [Value; ROWS_PER_THREAD as usize]) -> Value {
        let Some(i) = self.fragment_register(acc, i) else { return per_row[0] };
        per_row[fragment::d_row_half(i) as usize]
    }

    /// `v` combined with `op` over the 4 threads that hold the same accumulator rows (the
    /// butterfly shuffles of `arch::fragment::ROW_LANE_MASKS`); every lane of the warp calls it.
    #[track_caller]
    pub fn quad_reduce(&mut self, op: RowOp, v: Value) -> Value {
        self.at_caller(|k| {
            let mut v = k.materialize(v);
            for m in ROW_LANE_MASKS {
                let other = k.shfl(ShflMode::Bfly, v, Value::u32(m), 32, Value::u32(super::warp::FULL_MASK));
                v = k.binary(op.bin(), v, other);
            }
            v
        })
    }

    /// The max or sum of row `half` (0: the thread's origin row, 1: the row 8 below) of the
    /// accumulator, over this thread's elements (`RowScope::Thread`) or the whole row
    /// (`RowScope::Row`, the same value in all 4 threads of the row).
    #[track_caller]
    pub fn fragment_row_reduce(&mut self, acc: RegisterArray, half: u32, op: RowOp, scope: RowScope) -> Value {
        let Some(view) = self.fragment_accumulator(acc) else { return Value::f32(0.0) };
        if half >= ROWS_PER_THREAD {
            self.arg_error(
                "half",
                format!("a thread holds {ROWS_PER_THREAD} rows of the accumulator (half 0 or 1), not {half}"),
            );
            return Value::f32(0.0);
        }
        self.at_caller(|k| {
            let mut regs =
                (0..view.len() as u32).filter(|&i| fragment::d_row_half(i) == half).map(|i| view.get(i as usize));
            let first = regs.next().expect("every N holds both rows");
            let mut v = regs.fold(first, |a, b| k.binary(op.bin(), a, b));
            if v == first {
                v = k.materialize(v);
            }
            match scope {
                RowScope::Thread => v,
                RowScope::Row => k.quad_reduce(op, v),
            }
        })
    }

    /// Set every element whose column is `limit` or more to -inf (a ragged last KV block:
    /// `exp2` of it is 0).
    #[track_caller]
    pub fn fragment_mask_cols(&mut self, acc: RegisterArray, limit: Value) {
        let Some(view) = self.fragment_accumulator(acc) else { return };
        self.at_caller(|k| {
            let limit = k.cvt(limit, Type::U32);
            let (_, col) = k.fragment_origin();
            for (i, &r) in view.regs.iter().enumerate() {
                let c = k.add(col, Value::u32(fragment::d_register_offset(i as u32).1));
                let out = k.ge(c, limit);
                let v = k.select(out, Value::f32(f32::NEG_INFINITY), Value::Reg(r));
                k.assign(r, v);
            }
        })
    }

    /// Set every element above diagonal `diag` (column > row + `diag`, signed) to -inf: the
    /// causal mask of a tile whose first column is `diag` past its first row's diagonal.
    #[track_caller]
    pub fn fragment_mask_causal(&mut self, acc: RegisterArray, diag: Value) {
        let Some(view) = self.fragment_accumulator(acc) else { return };
        self.at_caller(|k| {
            let diag = k.cvt(diag, Type::S32);
            let (row, col) = k.fragment_origin();
            let (row, col) = (k.cvt(row, Type::S32), k.cvt(col, Type::S32));
            // col - row of the thread's origin; each register adds its own offset.
            let origin = k.sub(col, row);
            for (i, &r) in view.regs.iter().enumerate() {
                let (dr, dc) = fragment::d_register_offset(i as u32);
                let d = k.add(origin, Value::s32(dc as i32 - dr as i32));
                let out = k.gt(d, diag);
                let v = k.select(out, Value::f32(f32::NEG_INFINITY), Value::Reg(r));
                k.assign(r, v);
            }
        })
    }

    /// Round columns `[16 kstep, 16 kstep + 16)` of the f32 accumulator `acc` to `to` (bf16 or
    /// f16) into `a` (4 u32): the A fragment of k-step `kstep` of a `wgmma.mma_async` with A
    /// from registers whose A is `acc`'s tile. Each thread's A elements are its own D registers
    /// (`arch::fragment::d_register_of_a`): no data moves between threads.
    #[track_caller]
    pub fn fragment_to_a(&mut self, a: RegisterArray, acc: RegisterArray, kstep: u32, to: Type) {
        let Some(view) = self.fragment_accumulator(acc) else { return };
        if a.elem() != Type::U32 || a.dims() != [A_REGS] {
            self.arg_error(
                "a",
                format!(
                    "an A fragment is {A_REGS} u32 per thread (`T.registers::<u32>([{A_REGS}])`, or a row of \
                     `T.registers::<u32>([N / 16, {A_REGS}])`), found {:?} of {}",
                    a.dims(),
                    a.elem()
                ),
            );
            return;
        }
        let ksteps = view.n / A_COLS;
        if kstep >= ksteps {
            self.arg_error(
                "kstep",
                format!("k-step {kstep} of a 64 x {} accumulator, which has {ksteps} of {A_COLS} columns", view.n),
            );
            return;
        }
        self.at_caller(|k| {
            for (reg, dst) in a.regs().into_iter().enumerate() {
                // Inside the accumulator: the k-step was checked against its columns above.
                let parts: Vec<Value> = (0..A_PARTS)
                    .filter_map(|part| fragment::d_register_of_a(kstep, reg as u32, part, view.len() as u32))
                    .map(|i| view.get(i as usize))
                    .collect();
                let [lo, hi] = parts[..] else { continue };
                let packed = k.pack_half2_u32(lo, hi, to);
                k.assign(dst, packed);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;
    use crate::ptx_text::{count, find_all};

    fn kernel() -> KernelBuilder {
        let mut k = KernelBuilder::new("frag", Target::Sm90a);
        k.require_block(128, 1, 1);
        k
    }

    #[test]
    fn a_row_reduction_is_the_threads_elements_then_two_butterflies() {
        let mut k = kernel();
        let acc = k.alloc_registers(Type::F32, &[32]);
        let m = k.fragment_row_reduce(acc, 1, RowOp::Max, RowScope::Row);
        let s = k.fragment_row_reduce(acc, 0, RowOp::Sum, RowScope::Thread);
        let out = k.param_global("out", Type::F32, true);
        k.st_global(out, Value::u32(0), m);
        k.st_global(out, Value::u32(1), s);
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        // 16 registers per row half: 15 combines each, plus the 2 after the shuffles.
        assert_eq!(count(&ptx, "max.f32 %f*, %f*, %f*"), 15 + 2, "{ptx}");
        assert_eq!(count(&ptx, "add.f32 %f*, %f*, %f*"), 15, "{ptx}");
        let shfl = find_all(&ptx, "shfl.sync.bfly.b32 %f*, %f*, *, 0x1f, 0xffffffff");
        assert_eq!(shfl.len(), 2, "{ptx}");
        assert!(shfl[0].matches("shfl.sync.bfly.b32 %f*, %f*, 1, 0x1f, 0xffffffff"), "{}", shfl[0]);
        assert!(shfl[1].matches("shfl.sync.bfly.b32 %f*, %f*, 2, 0x1f, 0xffffffff"), "{}", shfl[1]);
    }

    #[test]
    fn p_becomes_the_a_fragment_through_register_pairs() {
        let mut k = kernel();
        let acc = k.alloc_registers(Type::F32, &[32]);
        let a = k.alloc_registers(Type::U32, &[4]);
        k.fragment_to_a(a, acc, 1, Type::BF16);
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        let cvts = find_all(&ptx, "cvt.rn.bf16x2.f32");
        assert_eq!(cvts.len(), 4, "{ptx}");
        // A register r of k-step 1 is D registers 8 + 2r (low) and 9 + 2r (high).
        let f0 = acc.regs()[0].id;
        for (r, cvt) in cvts.iter().enumerate() {
            let lo = f0 + 8 + 2 * r as u32;
            assert!(cvt.matches(&format!("cvt.rn.bf16x2.f32 %r*, %f{}, %f{lo}", lo + 1)), "{cvt}");
        }
    }

    #[test]
    fn misuse_names_the_argument() {
        let mut k = kernel();
        let acc = k.alloc_registers(Type::F32, &[32]);
        let wrong = k.alloc_registers(Type::U32, &[8]);
        let a = k.alloc_registers(Type::U32, &[4]);
        k.fragment_to_a(wrong, acc, 0, Type::BF16);
        k.fragment_to_a(a, acc, 4, Type::BF16);
        k.fragment_row_reduce(acc, 2, RowOp::Max, RowScope::Row);
        k.fragment_row(acc, 32);
        k.fragment_of_row(acc, 40, [Value::f32(0.0), Value::f32(1.0)]);
        k.fragment_mask_cols(wrong, Value::u32(3));
        let tiny = k.alloc_registers(Type::F32, &[1]);
        k.fragment_row_reduce(tiny, 1, RowOp::Sum, RowScope::Row);
        let e = k.finish().unwrap_err().to_string();
        assert!(e.contains("an A fragment is 4 u32 per thread"), "{e}");
        assert!(e.contains("k-step 4 of a 64 x 64 accumulator, which has 4 of 16 columns"), "{e}");
        assert!(e.contains("a thread holds 2 rows of the accumulator (half 0 or 1), not 2"), "{e}");
        assert!(e.contains("register 32 of a 64 x 64 accumulator, which has 32"), "{e}");
        assert!(e.contains("register 40 of a 64 x 64 accumulator, which has 32"), "{e}");
        assert!(e.contains("the accumulator is a 1-dimensional f32 register array"), "{e}");
        assert!(e.contains("an accumulator of 1 f32 registers is 64 x 2"), "{e}");
    }
}
