//! Loads and stores of global and shared arrays, by element index.

use super::handles::*;
use super::kernel_builder::KernelBuilder;
use crate::ir::*;

impl KernelBuilder {
    /// The byte offset of constant element index `i`, or a build error when the index is
    /// negative or its offset does not fit an `addr_ty` address (it would wrap onto other data).
    #[track_caller]
    fn const_offset(&mut self, i: i128, elem: Type, addr_ty: Type) -> Option<i128> {
        let off = i * elem.size() as i128;
        if i < 0 {
            self.error(format!("index {i} is negative"));
            return None;
        }
        if off >= 1i128 << addr_ty.bits() {
            self.error(format!("index {i} is {off} bytes in, beyond any {addr_ty} address"));
            return None;
        }
        Some(off)
    }

    /// Byte offset of element `idx` as an operand of `addr_ty` (folded when `idx` is constant).
    #[track_caller]
    fn elem_offset(&mut self, idx: Value, elem: Type, addr_ty: Type) -> Value {
        if let Some(i) = idx.as_imm_i128() {
            let off = self.const_offset(i, elem, addr_ty).unwrap_or(0);
            return Value::imm_u(off as u64, addr_ty);
        }
        if !idx.ty().is_int() {
            self.error(format!("an index must be an integer, found {}", idx.ty()));
            return Value::imm_u(0, addr_ty);
        }
        let wide = self.cvt(
            idx,
            if addr_ty == Type::U64 {
                if idx.ty().is_signed() {
                    Type::S64
                } else {
                    Type::U64
                }
            } else {
                Type::U32
            },
        );
        let wide = if wide.ty() != addr_ty { self.cvt(wide, addr_ty) } else { wide };
        self.mul(wide, Value::imm_u(elem.size() as u64, addr_ty))
    }

    /// Address (u64) of `ptr[idx]` in global memory.
    #[track_caller]
    pub fn global_elem_addr(&mut self, ptr: GlobalPtr, idx: Value) -> Value {
        let off = self.elem_offset(idx, ptr.elem, Type::U64);
        self.add(ptr.addr, off)
    }

    #[track_caller]
    pub fn ld_global(&mut self, ptr: GlobalPtr, idx: Value) -> Value {
        let (addr, offset) = self.split_offset(ptr.addr, idx, ptr.elem, Type::U64);
        let ty = ptr.elem;
        let dst = self.new_reg(ty);
        self.push(MemoryOp::Ld { space: Space::Global, ty, dst, addr, offset, volatile: false });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn st_global(&mut self, ptr: GlobalPtr, idx: Value, v: Value) {
        if !ptr.mutable {
            self.error("store through a read-only buffer (`&[T]`); declare the parameter `&mut [T]`");
        }
        let v = self.store_value(v, ptr.elem);
        let (addr, offset) = self.split_offset(ptr.addr, idx, ptr.elem, Type::U64);
        self.push(MemoryOp::St { space: Space::Global, ty: ptr.elem, addr, offset, src: v, volatile: false });
    }

    /// Atomic `ptr[idx] += v`, returning the old value.
    #[track_caller]
    pub fn atomic_add_global(&mut self, ptr: GlobalPtr, idx: Value, v: Value) -> Value {
        if !ptr.mutable {
            self.error("atomic add through a read-only buffer (`&[T]`); declare the parameter `&mut [T]`");
        }
        let v = self.store_value(v, ptr.elem);
        let addr = self.global_elem_addr(ptr, idx);
        let dst = self.new_reg(ptr.elem);
        self.push(MemoryOp::AtomAdd { space: Space::Global, ty: ptr.elem, dst, addr, src: v });
        Value::Reg(dst)
    }

    #[track_caller]
    fn check_shared_index(&mut self, arr: SharedArray, idx: Value) {
        if let (Some(i), Some(len)) = (idx.as_imm_i128(), arr.len) {
            if i < 0 || i >= len as i128 {
                self.error(format!("index {i} is out of bounds for a shared array of length {len}"));
            }
        }
    }

    /// 32-bit shared address of `arr[idx]`.
    #[track_caller]
    pub fn shared_elem_addr(&mut self, arr: SharedArray, idx: Value) -> Value {
        self.check_shared_index(arr, idx);
        let base = self.shared_base_addr(arr);
        let off = self.elem_offset(idx, arr.elem, Type::U32);
        self.add(base, off)
    }

    #[track_caller]
    pub fn ld_shared(&mut self, arr: SharedArray, idx: Value) -> Value {
        self.check_shared_index(arr, idx);
        let base = self.shared_base_addr(arr);
        let (addr, offset) = self.split_offset(base, idx, arr.elem, Type::U32);
        let dst = self.new_reg(arr.elem);
        self.push(MemoryOp::Ld { space: Space::Shared, ty: arr.elem, dst, addr, offset, volatile: false });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn st_shared(&mut self, arr: SharedArray, idx: Value, v: Value) {
        self.check_shared_index(arr, idx);
        let v = self.store_value(v, arr.elem);
        let base = self.shared_base_addr(arr);
        let (addr, offset) = self.split_offset(base, idx, arr.elem, Type::U32);
        self.push(MemoryOp::St { space: Space::Shared, ty: arr.elem, addr, offset, src: v, volatile: false });
    }

    /// Load a `ty` from a raw address in `space` (the escape hatch under the typed arrays).
    #[track_caller]
    pub fn ld_raw(&mut self, space: Space, ty: Type, addr: Value, offset: i32) -> Value {
        let dst = self.new_reg(ty);
        self.push(MemoryOp::Ld { space, ty, dst, addr, offset, volatile: false });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn st_raw(&mut self, space: Space, addr: Value, offset: i32, v: Value) {
        let ty = v.ty();
        self.push(MemoryOp::St { space, ty, addr, offset, src: v, volatile: false });
    }

    /// Ampere `cp.async` of `bytes` (4/8/16) from global `src` to shared `dst`.
    #[track_caller]
    pub fn cp_async(&mut self, dst: Value, src: Value, bytes: u32) {
        self.push(MemoryOp::CpAsync { dst, src, bytes });
    }
    /// `cp.async.mbarrier.arrive[.noinc]`: arrive on `bar` once this thread's prior
    /// `cp.async` copies have landed (see [`MemoryOp::CpAsyncMbarrierArrive`]).
    #[track_caller]
    pub fn cp_async_mbarrier_arrive(&mut self, bar: super::handles::Barrier, noinc: bool) {
        self.push(MemoryOp::CpAsyncMbarrierArrive { bar: bar.addr, noinc });
    }

    #[track_caller]
    pub fn cp_async_commit_group(&mut self) {
        self.push(MemoryOp::CpAsyncCommitGroup);
    }
    #[track_caller]
    pub fn cp_async_wait_group(&mut self, n: u32) {
        self.push(MemoryOp::CpAsyncWaitGroup { n });
    }

    /// A value to store as `elem`: immediates are retyped, registers must match.
    #[track_caller]
    fn store_value(&mut self, v: Value, elem: Type) -> Value {
        if v.ty() == elem {
            return v;
        }
        match v {
            Value::Imm { .. } if !elem.is_half() => self.imm_as("a store", v, elem),
            _ => {
                self.error(format!("cannot store a {} into an array of {elem}; convert with `as`", v.ty()));
                v
            }
        }
    }

    /// Split `base + idx*size` into a register address and a constant byte offset.
    #[track_caller]
    fn split_offset(&mut self, base: Value, idx: Value, elem: Type, addr_ty: Type) -> (Value, i32) {
        if let Some(i) = idx.as_imm_i128() {
            let Some(off) = self.const_offset(i, elem, addr_ty) else { return (base, 0) };
            if let Ok(o) = i32::try_from(off) {
                return (base, o);
            }
        }
        let off = self.elem_offset(idx, elem, addr_ty);
        (self.add(base, off), 0)
    }
}
