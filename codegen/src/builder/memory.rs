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
        self.ld_global_access(ptr, idx, Access::Weak)
    }

    #[track_caller]
    pub fn st_global(&mut self, ptr: GlobalPtr, idx: Value, v: Value) {
        self.st_global_access(ptr, idx, v, Access::Weak)
    }

    /// `ld.sem.scope.global` of `ptr[idx]`: a strong load, `.relaxed` or `.acquire` (what a
    /// flag is read with: an acquire makes the writes its release published visible).
    #[track_caller]
    pub fn ld_global_ordered(&mut self, ptr: GlobalPtr, idx: Value, order: MemOrder) -> Value {
        if let Some(p) = order.problem(true) {
            self.error(p);
        }
        self.ld_global_access(ptr, idx, Access::Strong(order))
    }

    /// `st.sem.scope.global` of `ptr[idx] = v`: a strong store, `.relaxed` or `.release`
    /// (a release publishes every write of this thread before it).
    #[track_caller]
    pub fn st_global_ordered(&mut self, ptr: GlobalPtr, idx: Value, v: Value, order: MemOrder) {
        if let Some(p) = order.problem(false) {
            self.error(p);
        }
        self.st_global_access(ptr, idx, v, Access::Strong(order))
    }

    #[track_caller]
    fn ld_global_access(&mut self, ptr: GlobalPtr, idx: Value, access: Access) -> Value {
        let (addr, offset) = self.split_offset(ptr.addr, idx, ptr.elem, Type::U64);
        let ty = ptr.elem;
        let dst = self.new_reg(ty);
        self.push(MemoryOp::Ld { space: Space::Global, ty, dst, addr, offset, access });
        Value::Reg(dst)
    }

    #[track_caller]
    fn st_global_access(&mut self, ptr: GlobalPtr, idx: Value, v: Value, access: Access) {
        if !ptr.mutable {
            self.error("store through a read-only buffer (`&[T]`); declare the parameter `&mut [T]`");
        }
        let v = self.store_value(v, ptr.elem);
        let (addr, offset) = self.split_offset(ptr.addr, idx, ptr.elem, Type::U64);
        self.push(MemoryOp::St { space: Space::Global, ty: ptr.elem, addr, offset, src: v, access });
    }

    /// Atomic `ptr[idx] += v`, returning the old value.
    #[track_caller]
    pub fn atomic_add_global(&mut self, ptr: GlobalPtr, idx: Value, v: Value) -> Value {
        self.atomic(ptr.into(), idx, AtomOp::Add, v, None, AtomOrder::default())
    }

    /// `atom.op` on `arr[idx]` (global, shared, or another CTA's shared memory), returning
    /// the old value; `cmp` is `cas`'s compare value.
    #[track_caller]
    pub fn atomic(
        &mut self,
        arr: ArrayRef,
        idx: Value,
        op: AtomOp,
        v: Value,
        cmp: Option<Value>,
        order: AtomOrder,
    ) -> Value {
        let dst = self.atomic_inst(arr, idx, op, v, cmp, order, true);
        Value::Reg(dst.expect("a result was asked for"))
    }

    /// `red.op` on `arr[idx]`: an atomic update without a result.
    #[track_caller]
    pub fn reduce(&mut self, arr: ArrayRef, idx: Value, op: AtomOp, v: Value, order: AtomOrder) {
        self.atomic_inst(arr, idx, op, v, None, order, false);
    }

    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    fn atomic_inst(
        &mut self,
        arr: ArrayRef,
        idx: Value,
        op: AtomOp,
        v: Value,
        cmp: Option<Value>,
        order: AtomOrder,
        result: bool,
    ) -> Option<Reg> {
        if let ArrayRef::Global(g) = arr {
            if !g.mutable {
                self.error(format!(
                    "atomic {} through a read-only buffer (`&[T]`); declare the parameter `&mut [T]`",
                    op.name()
                ));
            }
        }
        let ty = arr.elem();
        let v = self.store_value(v, ty);
        let cmp = cmp.map(|c| self.store_value(c, ty));
        let addr = self.array_elem_addr(arr, idx);
        let dst = result.then(|| self.new_reg(ty));
        self.push(MemoryOp::Atom { op, order, space: arr.space(), ty, dst, addr, src: v, cmp });
        dst
    }

    /// The address of `arr[idx]`: 64-bit for global memory, 32-bit for shared.
    #[track_caller]
    pub fn array_elem_addr(&mut self, arr: ArrayRef, idx: Value) -> Value {
        match arr {
            ArrayRef::Global(g) => self.global_elem_addr(g, idx),
            ArrayRef::Shared(s) => self.shared_elem_addr(s, idx),
            ArrayRef::Remote(r) => self.remote_elem_addr(r, idx),
        }
    }

    /// `arr[idx]` of any array.
    #[track_caller]
    pub fn ld_array(&mut self, arr: ArrayRef, idx: Value) -> Value {
        match arr {
            ArrayRef::Global(g) => self.ld_global(g, idx),
            ArrayRef::Shared(s) => self.ld_shared(s, idx),
            ArrayRef::Remote(r) => self.ld_remote(r, idx),
        }
    }

    /// `arr[idx] = v` of any array.
    #[track_caller]
    pub fn st_array(&mut self, arr: ArrayRef, idx: Value, v: Value) {
        match arr {
            ArrayRef::Global(g) => self.st_global(g, idx, v),
            ArrayRef::Shared(s) => self.st_shared(s, idx, v),
            ArrayRef::Remote(r) => self.st_remote(r, idx, v),
        }
    }

    /// The base address of `arr` and its state space (global, shared::cta, shared::cluster).
    #[track_caller]
    fn array_base(&mut self, arr: ArrayRef) -> (Value, Space, Type) {
        match arr {
            ArrayRef::Global(g) => (g.addr, Space::Global, Type::U64),
            ArrayRef::Shared(s) => {
                let b = self.shared_base_addr(s);
                (b, Space::Shared, Type::U32)
            }
            ArrayRef::Remote(r) => (r.addr, Space::SharedCluster, Type::U32),
        }
    }

    #[track_caller]
    fn check_array_index(&mut self, arr: ArrayRef, idx: Value, n: u32) {
        let len = match arr {
            ArrayRef::Shared(s) => s.len,
            ArrayRef::Remote(r) => r.len,
            ArrayRef::Global(_) => None,
        };
        if let (Some(i), Some(len)) = (idx.as_imm_i128(), len) {
            if i < 0 || i + n as i128 > len as i128 {
                self.error(format!(
                    "elements {i}..{} are out of bounds for a shared array of length {len}",
                    i + n as i128
                ));
            }
        }
    }

    /// One load of `n` (1, 2 or 4) consecutive elements `arr[idx..idx + n]` (`ld.v2`/`ld.v4`;
    /// `idx` must be a multiple of `n`); `nc`: through the read-only data cache (global only,
    /// for data no thread of the kernel writes).
    #[track_caller]
    pub fn ld_vec(&mut self, arr: ArrayRef, idx: Value, n: u32, nc: bool) -> Vec<Value> {
        if let (ArrayRef::Global(g), true) = (arr, nc) {
            if g.mutable {
                // The read-only data cache is not coherent with the kernel's own stores.
                self.error(
                    "`ld.nc` reads through the read-only data cache, but the buffer is `&mut [T]`: a store of this \
                     kernel would not be seen; declare the parameter `&[T]`, or use `ld`",
                );
            }
        }
        self.check_array_index(arr, idx, n);
        let (base, space, addr_ty) = self.array_base(arr);
        let ty = arr.elem();
        let (addr, offset) = self.split_offset(base, idx, ty, addr_ty);
        let dsts: Vec<Reg> = (0..n).map(|_| self.new_reg(ty)).collect();
        self.push(MemoryOp::LdVec { space, ty, dsts: dsts.clone(), addr, offset, nc });
        dsts.into_iter().map(Value::Reg).collect()
    }

    /// One store of `vals` (2 or 4) into `arr[idx..idx + vals.len()]` (`st.v2`/`st.v4`).
    #[track_caller]
    pub fn st_vec_at(&mut self, arr: ArrayRef, idx: Value, vals: &[Value]) {
        if let ArrayRef::Global(g) = arr {
            if !g.mutable {
                self.error("store through a read-only buffer (`&[T]`); declare the parameter `&mut [T]`");
            }
        }
        self.check_array_index(arr, idx, vals.len() as u32);
        let ty = arr.elem();
        let vals: Vec<Value> = vals.iter().map(|&v| self.store_value(v, ty)).collect();
        let (base, space, addr_ty) = self.array_base(arr);
        let (addr, offset) = self.split_offset(base, idx, ty, addr_ty);
        self.push(MemoryOp::StVec { space, ty, addr, offset, srcs: vals });
    }

    /// `arr` as seen from the cluster: the same array in CTA `cta` (`mapa` of its base).
    #[track_caller]
    pub fn map_shared_to_cta(&mut self, arr: SharedArray, cta: Value) -> RemoteShared {
        let base = self.shared_base_addr(arr);
        let addr = self.map_shared_addr(base, cta);
        RemoteShared { addr, elem: arr.elem, len: arr.len }
    }

    /// `mapa.shared::cluster.u32`: the shared::cluster address of this CTA's shared address
    /// `addr` in CTA `cta` of the cluster.
    #[track_caller]
    pub fn map_shared_addr(&mut self, addr: Value, cta: Value) -> Value {
        let cta = if cta.ty() == Type::U32 { cta } else { self.cvt(cta, Type::U32) };
        let dst = self.new_reg(Type::U32);
        self.push(SyncOp::Mapa { dst, addr, cta });
        Value::Reg(dst)
    }

    /// The shared::cluster address of `r[idx]`.
    #[track_caller]
    pub fn remote_elem_addr(&mut self, r: RemoteShared, idx: Value) -> Value {
        self.check_array_index(ArrayRef::Remote(r), idx, 1);
        let off = self.elem_offset(idx, r.elem, Type::U32);
        self.add(r.addr, off)
    }

    /// `r[idx]` with `ld.shared::cluster`.
    #[track_caller]
    pub fn ld_remote(&mut self, r: RemoteShared, idx: Value) -> Value {
        self.check_array_index(ArrayRef::Remote(r), idx, 1);
        let (addr, offset) = self.split_offset(r.addr, idx, r.elem, Type::U32);
        let dst = self.new_reg(r.elem);
        self.push(MemoryOp::Ld { space: Space::SharedCluster, ty: r.elem, dst, addr, offset, access: Access::Weak });
        Value::Reg(dst)
    }

    /// `r[idx] = v` with `st.shared::cluster`.
    #[track_caller]
    pub fn st_remote(&mut self, r: RemoteShared, idx: Value, v: Value) {
        self.check_array_index(ArrayRef::Remote(r), idx, 1);
        let v = self.store_value(v, r.elem);
        let (addr, offset) = self.split_offset(r.addr, idx, r.elem, Type::U32);
        self.push(MemoryOp::St { space: Space::SharedCluster, ty: r.elem, addr, offset, src: v, access: Access::Weak });
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
        self.push(MemoryOp::Ld { space: Space::Shared, ty: arr.elem, dst, addr, offset, access: Access::Weak });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn st_shared(&mut self, arr: SharedArray, idx: Value, v: Value) {
        self.check_shared_index(arr, idx);
        let v = self.store_value(v, arr.elem);
        let base = self.shared_base_addr(arr);
        let (addr, offset) = self.split_offset(base, idx, arr.elem, Type::U32);
        self.push(MemoryOp::St { space: Space::Shared, ty: arr.elem, addr, offset, src: v, access: Access::Weak });
    }

    /// Load a `ty` from a raw address in `space` (the escape hatch under the typed arrays).
    #[track_caller]
    pub fn ld_raw(&mut self, space: Space, ty: Type, addr: Value, offset: i32) -> Value {
        let dst = self.new_reg(ty);
        self.push(MemoryOp::Ld { space, ty, dst, addr, offset, access: Access::Weak });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn st_raw(&mut self, space: Space, addr: Value, offset: i32, v: Value) {
        let ty = v.ty();
        self.push(MemoryOp::St { space, ty, addr, offset, src: v, access: Access::Weak });
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
