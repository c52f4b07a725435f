//! Register arrays: `dims` elements each held in its own virtual register, indexed only by
//! values known when the kernel is built, so ptxas keeps every element in a register (a
//! runtime index would force the array into local memory). The basis for MMA fragments:
//! an [`super::Accumulator`] is one such array of f32.

use super::fragment::Accumulator;
use super::kernel_builder::KernelBuilder;
use crate::arch::limits::MAX_ARRAY_REGISTERS;
use crate::ir::*;

/// Most dimensions a register array has.
pub const MAX_REGISTER_RANK: usize = 4;

/// A register array, or a sub-array of one: `dims[..rank]` (outermost first) of `elem`,
/// element `i` (row-major) in register `first + i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterArray {
    first: u32,
    elem: Type,
    dims: [u32; MAX_REGISTER_RANK],
    rank: u8,
}

impl RegisterArray {
    pub fn elem(&self) -> Type {
        self.elem
    }
    pub fn rank(&self) -> usize {
        self.rank as usize
    }
    /// The shape, outermost first.
    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.rank as usize]
    }
    /// Elements (= registers).
    pub fn len(&self) -> u32 {
        self.dims().iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Every register, row-major.
    pub fn regs(&self) -> Vec<Reg> {
        (0..self.len()).map(|i| Reg { id: self.first + i, ty: self.elem }).collect()
    }
    /// The array as a wgmma accumulator of 64 x `2 * len` (an f32 array of `n / 2` elements).
    pub fn as_accumulator(&self) -> Option<Accumulator> {
        (self.elem == Type::F32 && self.rank == 1).then(|| Accumulator { n: 2 * self.len(), regs: self.regs() })
    }
}

impl KernelBuilder {
    /// `T.registers::<T>(dims)`: a register array, every element set to 0.
    #[track_caller]
    pub fn alloc_registers(&mut self, elem: Type, dims: &[u32]) -> RegisterArray {
        let rank = dims.len();
        // Checked: four u32 extents reach 2^128 (a wrapped product of 0 let an array through).
        let len = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).unwrap_or(u64::MAX);
        let words = len.saturating_mul(elem.size().div_ceil(4).max(1) as u64);
        let problem = if !(1..=MAX_REGISTER_RANK).contains(&rank) {
            Some(format!("a register array has 1 to {MAX_REGISTER_RANK} dimensions, not {rank}"))
        } else if dims.contains(&0) {
            Some(format!("a register array of shape {dims:?} has no elements"))
        } else if words > MAX_ARRAY_REGISTERS as u64 {
            Some(format!(
                "a register array of shape {dims:?} of {elem} takes {words} 32-bit registers; a thread has \
                 {MAX_ARRAY_REGISTERS} (the rest would spill to local memory): keep it in shared memory"
            ))
        } else {
            None
        };
        if let Some(p) = problem {
            self.error(p);
            return RegisterArray { first: self.new_reg(elem).id, elem, dims: [1; MAX_REGISTER_RANK], rank: 1 };
        }
        let mut shape = [1u32; MAX_REGISTER_RANK];
        shape[..rank].copy_from_slice(dims);
        let first = self.next_reg;
        let zero = if elem == Type::Pred {
            Value::pred(false)
        } else if elem.is_float() {
            // Half types have no immediate form: a converted 0.
            Value::f32(0.0)
        } else {
            Value::imm_u(0, elem)
        };
        let regs: Vec<Reg> = (0..len).map(|_| self.new_reg(elem)).collect();
        let zero = if zero.ty() != elem { self.cvt(zero, elem) } else { zero };
        self.at_caller(|k| {
            for r in regs {
                k.assign(r, zero);
            }
        });
        RegisterArray { first, elem, dims: shape, rank: rank as u8 }
    }

    /// A constant index into a register array (a runtime one is a build error).
    #[track_caller]
    fn register_index(&mut self, i: Value, extent: u32) -> u32 {
        match i.as_imm_i128() {
            Some(c) if (0..extent as i128).contains(&c) => c as u32,
            Some(c) => {
                self.error(format!("index {c} is out of bounds for a register array dimension of {extent}"));
                0
            }
            None => {
                self.error(
                    "a register array is indexed with values known when the kernel is built (literals, consts, \
                     `#[comptime]` parameters, `#[unroll]` loop variables); a runtime index would put it in \
                     local memory",
                );
                0
            }
        }
    }

    /// `regs[i]` of an array of rank 2 or more: the sub-array at `i`.
    #[track_caller]
    pub fn registers_at(&mut self, arr: RegisterArray, i: Value) -> RegisterArray {
        if arr.rank < 2 {
            self.error("indexing a 1-dimensional register array gives an element (`register`)");
            return arr;
        }
        let i = self.register_index(i, arr.dims[0]);
        let inner: u32 = arr.dims[1..arr.rank as usize].iter().product();
        let mut sub = arr;
        sub.first += i * inner;
        sub.dims.copy_within(1.., 0);
        sub.dims[MAX_REGISTER_RANK - 1] = 1;
        sub.rank -= 1;
        sub
    }

    /// The register of element `i` of a 1-dimensional (sub-)array.
    #[track_caller]
    pub fn register(&mut self, arr: RegisterArray, i: Value) -> Reg {
        if arr.rank != 1 {
            self.error(format!("an element of a {}-dimensional register array needs {} indices", arr.rank, arr.rank));
        }
        let i = self.register_index(i, arr.dims[arr.rank as usize - 1]);
        Reg { id: arr.first + i, ty: arr.elem }
    }

    /// Read element `i` of a 1-dimensional (sub-)array.
    #[track_caller]
    pub fn get_register(&mut self, arr: RegisterArray, i: Value) -> Value {
        Value::Reg(self.register(arr, i))
    }

    /// `regs[i] = v`.
    #[track_caller]
    pub fn set_register(&mut self, arr: RegisterArray, i: Value, v: Value) {
        let r = self.register(arr, i);
        self.assign(r, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;

    #[test]
    fn a_shape_whose_element_count_overflows_is_refused() {
        // 2^64 elements: the product wrapped to 0 (or panicked in a debug build).
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.alloc_registers(Type::U32, &[65536, 65536, 65536, 65536]);
        let e = k.finish().unwrap_err().to_string();
        assert!(e.contains("takes 18446744073709551615 32-bit registers; a thread has 255"), "{e}");
    }

    #[test]
    fn elements_are_registers_in_row_major_order() {
        let mut k = KernelBuilder::new("r", Target::Sm90a);
        let a = k.alloc_registers(Type::F32, &[4, 8]);
        assert_eq!((a.dims(), a.len()), (&[4u32, 8][..], 32));
        let row = k.registers_at(a, Value::u32(2));
        let r = k.register(row, Value::u32(5));
        assert_eq!(r.id, a.regs()[2 * 8 + 5].id);
        k.set_register(row, Value::u32(5), Value::f32(1.5));
        let acc = k.alloc_registers(Type::F32, &[32]).as_accumulator().unwrap();
        assert_eq!((acc.n, acc.len()), (64, 32));
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        assert!(crate::ptx_text::has(&ptx, "mov.f32 %f*, 0f3FC00000"), "{ptx}");
    }

    #[test]
    fn runtime_and_out_of_range_indices_are_build_errors() {
        let mut k = KernelBuilder::new("r", Target::Sm90a);
        let a = k.alloc_registers(Type::U32, &[8]);
        let t = k.param("t", Type::U32);
        k.get_register(a, t);
        k.get_register(a, Value::u32(8));
        k.alloc_registers(Type::F64, &[200]);
        let e = k.finish().unwrap_err().to_string();
        assert!(e.contains("indexed with values known when the kernel is built"), "{e}");
        assert!(e.contains("index 8 is out of bounds for a register array dimension of 8"), "{e}");
        assert!(e.contains("takes 400 32-bit registers"), "{e}");
    }
}
