//! The kernel builder: the one way IR gets made (the DSL expands to calls of it).
//! Problems found while building are collected with their source location and reported
//! together by `finish`, so a kernel with three mistakes shows all three.

use super::handles::*;
use crate::arch::check::{
    block_shape_problem, cluster_problem, max_registers_problem, min_blocks_problem, shared_alloc_problems,
};
use crate::arch::limits::MAX_NESTING_DEPTH;
use crate::arch::{check_kernel, Target};
use crate::error::{CodegenError, Diagnostic, Result};
use crate::ir::*;

pub struct KernelBuilder {
    pub(crate) name: String,
    pub(crate) target: Target,
    pub(crate) params: Vec<Param>,
    pub(crate) shared: Vec<SharedAlloc>,
    pub(crate) uses_dynamic_shared: bool,
    /// Typed tiles placed in the dynamic window (see `tile.rs`).
    pub(crate) dynamic: Vec<DynamicAlloc>,
    /// Where the first raw `dynamic_shared` view was made (it would alias the tiles).
    pub(crate) raw_dynamic_view: Option<SourceLoc>,
    pub(crate) bounds: LaunchBounds,
    /// Stack of open blocks; `blocks[0]` is the kernel body.
    pub(crate) blocks: Vec<Block>,
    pub(crate) next_reg: u32,
    pub(crate) loop_depth: u32,
    /// Location set by the DSL for the statement being built; overrides `#[track_caller]`.
    pub(crate) loc_override: Option<SourceLoc>,
    /// Where each argument of the op being built is, by parameter name (set by the DSL, see
    /// [`KernelBuilder::set_arg_locs`]): a problem of one argument is reported there.
    arg_locs: &'static [(&'static str, SourceLoc)],
    pub(crate) errors: Vec<Diagnostic>,
    /// The (place, message) of every error [`KernelBuilder::error`] recorded.
    reported: std::collections::HashSet<(SourceLoc, String)>,
    /// Whether building went past [`MAX_NESTING_DEPTH`] (reported once).
    too_deep: bool,
    /// The `#[phaser::device]` functions being expanded, innermost last (a name seen twice
    /// is recursion, which inlining cannot end).
    device_stack: Vec<&'static str>,
    /// Registers of `let mut` variables (DSL): an immutable `let` of one copies it.
    mut_vars: std::collections::HashSet<u32>,
    /// The kernel's own watchdog setting (see [`KernelBuilder::watchdog`]).
    pub(crate) watchdog: Option<Watchdog>,
}

impl KernelBuilder {
    pub fn new(name: impl Into<String>, target: Target) -> Self {
        KernelBuilder {
            name: name.into(),
            target,
            params: Vec::new(),
            shared: Vec::new(),
            uses_dynamic_shared: false,
            dynamic: Vec::new(),
            raw_dynamic_view: None,
            bounds: LaunchBounds::default(),
            blocks: vec![Vec::new()],
            next_reg: 0,
            loop_depth: 0,
            loc_override: None,
            arg_locs: &[],
            errors: Vec::new(),
            reported: Default::default(),
            too_deep: false,
            device_stack: Vec::new(),
            mut_vars: Default::default(),
            watchdog: None,
        }
    }

    /// What this kernel's blocking waits do when a phase never completes; a launch's own
    /// setting (`LaunchConfig::watchdog`) overrides it, and it overrides the device's default.
    pub fn watchdog(&mut self, w: Watchdog) -> &mut Self {
        self.watchdog = Some(w);
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn target(&self) -> Target {
        self.target
    }

    /// Set the source location attached to the following ops (the DSL calls this per
    /// statement); `None` goes back to the caller's location.
    pub fn set_loc(&mut self, loc: Option<SourceLoc>) {
        self.loc_override = loc;
    }

    #[track_caller]
    pub(crate) fn here(&self) -> SourceLoc {
        // A `match`, not `unwrap_or_else(SourceLoc::caller)`: the latter would report core's
        // closure-call site instead of the user's line.
        match self.loc_override {
            Some(l) => l,
            None => SourceLoc::caller(),
        }
    }

    /// Run `f` with every op it emits attributed to the caller's location (for builder
    /// helpers that emit many ops, so diagnostics and `.loc` point at the user's line).
    #[track_caller]
    pub(crate) fn at_caller<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let loc = self.here();
        let saved = self.loc_override;
        self.loc_override = Some(loc);
        let r = f(self);
        self.loc_override = saved;
        r
    }

    /// Record a build error at the current location; building goes on so later errors show too.
    /// The same message at the same place is recorded once: an op in an unrolled loop is built
    /// once per iteration, but its mistake is one.
    #[track_caller]
    pub fn error(&mut self, message: impl Into<String>) {
        let loc = self.here();
        self.error_at(loc, message.into());
    }

    fn error_at(&mut self, loc: SourceLoc, message: String) {
        if self.reported.insert((loc, message.clone())) {
            self.errors.push(Diagnostic { kernel: self.name.clone(), loc: Some(loc), message });
        }
    }

    /// Set where the arguments of the next op are, by parameter name (the DSL calls this
    /// before an op whose argument sizes may be known only when the kernel is built); the
    /// op's lowering clears them.
    pub fn set_arg_locs(&mut self, locs: &'static [(&'static str, SourceLoc)]) {
        self.arg_locs = locs;
    }

    pub(crate) fn clear_arg_locs(&mut self) {
        self.arg_locs = &[];
    }

    /// Record a build error of the argument `param` (a parameter name of the op registry):
    /// at the argument when the DSL said where it is, else like [`KernelBuilder::error`].
    #[track_caller]
    pub fn arg_error(&mut self, param: &str, message: impl Into<String>) {
        let loc = match self.arg_locs.iter().find(|(name, _)| *name == param) {
            Some(&(_, loc)) => loc,
            None => self.here(),
        };
        self.error_at(loc, message.into());
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    pub fn new_reg(&mut self, ty: Type) -> Reg {
        let r = Reg { id: self.next_reg, ty };
        self.next_reg += 1;
        r
    }

    #[track_caller]
    pub fn push_stmt(&mut self, kind: StmtKind) {
        let loc = Some(self.here());
        self.blocks.last_mut().expect("open block").push(Stmt::new(kind, loc));
    }

    #[track_caller]
    pub fn push(&mut self, inst: impl Into<Inst>) {
        self.push_stmt(StmtKind::Inst(inst.into()));
    }

    /// Run `f` with a fresh block open and return what it built. Beyond
    /// [`MAX_NESTING_DEPTH`] levels `f` is not run: the depth is a build error, and the IR
    /// (which every later pass walks recursively) never gets deeper.
    #[track_caller]
    pub(crate) fn nested(&mut self, f: super::control::Body<'_>) -> Block {
        if self.blocks.len() > MAX_NESTING_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.error(format!(
                    "control flow nests deeper than {MAX_NESTING_DEPTH} levels here; flatten the conditions"
                ));
            }
            return Vec::new();
        }
        self.blocks.push(Vec::new());
        f(self);
        self.blocks.pop().expect("nested block")
    }

    /// Enter the expansion of the device function `name` (its `module_path::name`): `false`,
    /// with a build error naming the cycle, when it is already being expanded (recursion:
    /// inlining it would never end). Pair every `true` with [`KernelBuilder::exit_device`].
    #[track_caller]
    pub fn enter_device(&mut self, name: &'static str) -> bool {
        if let Some(i) = self.device_stack.iter().position(|&d| d == name) {
            let mut cycle: Vec<&str> = self.device_stack[i..].to_vec();
            cycle.push(name);
            self.error(format!(
                "device function `{name}` calls itself ({}): device functions are inlined, so recursion \
                 cannot be expanded; rewrite it as a loop",
                cycle.join(" -> ")
            ));
            return false;
        }
        self.device_stack.push(name);
        true
    }

    /// Leave the device function entered last.
    pub fn exit_device(&mut self) {
        self.device_stack.pop();
    }

    /// A new `let mut` variable holding `init` (the DSL's mutable variables and parameters):
    /// like [`KernelBuilder::var`], and remembered, so that [`KernelBuilder::snapshot`] copies it.
    #[track_caller]
    pub fn mut_var(&mut self, init: Value) -> Reg {
        let r = self.var(init);
        self.mut_vars.insert(r.id);
        r
    }

    /// `v`, or a copy of it when it is the register of a `let mut` variable: an immutable
    /// binding (`let waited = phase;`) must not change when the variable does later.
    #[track_caller]
    pub fn snapshot(&mut self, v: Value) -> Value {
        match v {
            Value::Reg(r) if self.mut_vars.contains(&r.id) => Value::Reg(self.var(v)),
            v => v,
        }
    }

    // ---- launch shape -------------------------------------------------------------------

    // Each shape is checked here, so the error names the Rust line that declared it, by the
    // same functions `check_kernel` applies to any IR (`arch::check`).

    /// Record `problem` (if any) at the caller's line.
    #[track_caller]
    fn report(&mut self, problem: Option<String>) {
        if let Some(p) = problem {
            self.error(p);
        }
    }

    /// `.reqntid`: the kernel must be launched with exactly this block shape.
    #[track_caller]
    pub fn require_block(&mut self, x: u32, y: u32, z: u32) -> &mut Self {
        self.report(block_shape_problem("block shape", [x, y, z], self.target.limits()));
        self.bounds.reqntid = Some([x, y, z]);
        self
    }
    /// `.maxntid`: the kernel is never launched with more threads per block than this.
    #[track_caller]
    pub fn max_block(&mut self, x: u32, y: u32, z: u32) -> &mut Self {
        self.report(block_shape_problem("maximum block shape (.maxntid)", [x, y, z], self.target.limits()));
        self.bounds.maxntid = Some([x, y, z]);
        self
    }
    /// Declare a thread-block cluster shape (`.reqnctapercluster` + `.explicitcluster`).
    #[track_caller]
    pub fn cluster(&mut self, x: u32, y: u32, z: u32) -> &mut Self {
        // Whether the target has clusters at all is `check_kernel`'s to say (a target
        // question, like an instruction's availability); the shape is checked here.
        if self.target.limits().max_cluster_ctas > 0 {
            self.report(cluster_problem([x, y, z], self.target));
        }
        self.bounds.cluster = Some([x, y, z]);
        self
    }
    /// `.maxnreg n` (1..=255).
    #[track_caller]
    pub fn max_registers(&mut self, n: u32) -> &mut Self {
        self.report(max_registers_problem(n, self.target.limits()));
        self.bounds.maxnreg = Some(n);
        self
    }
    /// `.minnctapersm n` (1..=the blocks an SM holds).
    #[track_caller]
    pub fn min_blocks_per_sm(&mut self, n: u32) -> &mut Self {
        self.report(min_blocks_problem(n, self.target.limits()));
        self.bounds.minnctapersm = Some(n);
        self
    }

    // ---- parameters ---------------------------------------------------------------------

    /// `name`, or `name_2`, `name_3`, .. if a parameter has that name already (for code that
    /// adds parameters of its own choosing, such as the registry's sample arguments).
    pub fn fresh_param_name(&self, name: &str) -> String {
        let taken = |n: &str| self.params.iter().any(|p| p.name == n);
        if !taken(name) {
            return name.to_string();
        }
        (2..).map(|i| format!("{name}_{i}")).find(|n| !taken(n)).expect("a free name")
    }

    fn add_param(&mut self, name: &str, kind: ParamKind, ty: Type) -> Reg {
        let reg = self.new_reg(ty);
        if self.params.iter().any(|p| p.name == name) {
            self.errors.push(Diagnostic {
                kernel: self.name.clone(),
                loc: None,
                message: format!("two parameters are named `{name}`"),
            });
        }
        self.params.push(Param { name: name.to_string(), kind, reg, tma: None });
        reg
    }

    /// A scalar parameter.
    #[track_caller]
    pub fn param(&mut self, name: &str, ty: Type) -> Value {
        if ty == Type::Pred {
            self.error(format!("parameter `{name}`: predicates cannot be passed; pass a u32"));
        }
        Value::Reg(self.add_param(name, ParamKind::Scalar(ty), ty))
    }

    /// A global buffer of `elem`s (`&[T]` when `mutable` is false, `&mut [T]` otherwise).
    pub fn param_global(&mut self, name: &str, elem: Type, mutable: bool) -> GlobalPtr {
        let r = self.add_param(name, ParamKind::Global { elem, mutable }, Type::U64);
        GlobalPtr { addr: Value::Reg(r), elem, mutable }
    }

    /// A `CUtensorMap` passed by value; `rank` is the tensor's number of dimensions.
    #[track_caller]
    pub fn param_tensor_map(&mut self, name: &str, rank: u8) -> TensorMapRef {
        let ranks = crate::arch::check::TMA_RANKS;
        if !ranks.contains(&rank) {
            self.error(format!(
                "tensor map `{name}` has rank {rank}; TMA supports {} to {}",
                ranks.start(),
                ranks.end()
            ));
        }
        let r = self.add_param(name, ParamKind::TensorMap { rank }, Type::U64);
        TensorMapRef { addr: Value::Reg(r), rank }
    }

    // ---- shared memory ------------------------------------------------------------------

    #[track_caller]
    fn add_alloc(&mut self, name: &str, elem: Type, len: u32, align: u32, kind: SharedKind) -> AllocId {
        let id = AllocId(self.shared.len() as u32);
        let mut unique = name.to_string();
        let mut n = 1;
        while self.shared.iter().any(|a| a.name == unique) {
            unique = format!("{name}_{n}");
            n += 1;
        }
        let loc = Some(self.here());
        self.shared.push(SharedAlloc { name: unique, elem, len, align, kind, loc });
        id
    }

    /// `T.alloc_shared::<T>([len])`: a static shared array. Its size is checked against the
    /// target's static shared memory when the kernel is finished (in bytes as `u64`: a huge
    /// array is refused with its real size, never wrapped).
    #[track_caller]
    pub fn alloc_shared(&mut self, name: &str, elem: Type, len: u32) -> SharedArray {
        // Arrays of 128 bytes or more are 128-byte aligned: what TMA tensor copies require of
        // their shared operand (a 16-byte aligned destination faults on the GPU).
        let align = if elem.size() as u64 * len as u64 >= 128 { 128 } else { elem.size().max(16) };
        self.alloc_shared_with(name, elem, len, align)
    }

    #[track_caller]
    fn alloc_shared_with(&mut self, name: &str, elem: Type, len: u32, align: u32) -> SharedArray {
        for p in shared_alloc_problems(name, elem, len, align, self.target.limits()) {
            self.error(p);
        }
        let id = self.add_alloc(name, elem, len.max(1), align, SharedKind::Data);
        SharedArray { base: SharedBase::Static(id), elem, len: Some(len.max(1)) }
    }

    /// A static shared array aligned to `align` bytes (a power of two, at least 16, at most
    /// the target's [`crate::arch::Limits::max_shared_align`]): TMA destinations and sources
    /// need 128 bytes (1024 with 128-byte swizzling).
    #[track_caller]
    pub fn alloc_shared_aligned(&mut self, name: &str, elem: Type, len: u32, align: u32) -> SharedArray {
        if align < 16 {
            self.error(format!("shared array `{name}`: alignment {align} must be a power of two >= 16"));
        }
        let align = if align.is_power_of_two() { align.max(elem.size()).max(16) } else { align };
        self.alloc_shared_with(name, elem, len, align)
    }

    /// The block shape declared with `require_block` (`.reqntid`), if any.
    pub fn declared_block(&self) -> Option<[u32; 3]> {
        self.bounds.reqntid
    }

    /// `T.alloc_barriers(n)`: `n` 8-byte-aligned mbarriers.
    #[track_caller]
    pub fn alloc_barriers(&mut self, name: &str, n: u32) -> BarrierArray {
        if n == 0 {
            self.error(format!("alloc_barriers(`{name}`, 0): a barrier array needs at least one barrier"));
        }
        // Refused before anything sized by `n` exists (an array of 2^32 barriers would be
        // initialized one by one by a pipeline).
        let shared = self.target.limits().max_static_shared;
        let n = if n as u64 * Type::B64.size() as u64 > shared as u64 {
            self.error(format!(
                "alloc_barriers(`{name}`, {n}): {n} barriers of {} bytes exceed {}'s {shared} bytes of static \
                 shared memory",
                Type::B64.size(),
                self.target
            ));
            1
        } else {
            n.max(1)
        };
        let id = self.add_alloc(name, Type::B64, n, Type::B64.size(), SharedKind::Barriers);
        BarrierArray { alloc: id, len: n }
    }

    /// A view of dynamic shared memory starting `offset` bytes in (launch sets its size).
    #[track_caller]
    pub fn dynamic_shared(&mut self, elem: Type, offset: u32) -> SharedArray {
        if !offset.is_multiple_of(elem.size().max(1)) {
            self.error(format!("dynamic shared offset {offset} is not aligned to {elem} ({} bytes)", elem.size()));
        }
        let limit = self.target.limits().max_shared_per_block;
        if offset as u64 + elem.size() as u64 > limit as u64 {
            self.error(format!(
                "dynamic shared offset {offset} lies beyond {}'s {limit}-byte ({} KiB) shared memory per block",
                self.target,
                limit / 1024
            ));
        }
        self.uses_dynamic_shared = true;
        if self.raw_dynamic_view.is_none() {
            self.raw_dynamic_view = Some(self.here());
        }
        SharedArray { base: SharedBase::Dynamic { offset }, elem, len: None }
    }

    /// The 32-bit shared address of the start of a shared array.
    #[track_caller]
    pub fn shared_base_addr(&mut self, arr: SharedArray) -> Value {
        let dst = self.new_reg(Type::U32);
        match arr.base {
            SharedBase::Static(alloc) => self.push(MemoryOp::SharedAddr { dst, alloc }),
            SharedBase::Dynamic { offset } => {
                self.push(MemoryOp::DynSharedAddr { dst });
                if offset != 0 {
                    self.push(ArithOp::Binary { op: BinOp::Add, dst, a: Value::Reg(dst), b: Value::u32(offset) });
                }
            }
        }
        Value::Reg(dst)
    }

    // ---- finishing ----------------------------------------------------------------------

    /// Close the kernel: report every build error, then check it against its target.
    pub fn finish(mut self) -> Result<Kernel> {
        if let Some(w) = self.watchdog {
            if let Err(e) = w.validate("KernelBuilder::watchdog") {
                self.errors.push(Diagnostic { kernel: self.name.clone(), loc: None, message: e.to_string() });
            }
        }
        check_finished(self.finish_unchecked()?)
    }

    /// Whether the kernel so far holds a `setmaxnreg`.
    pub fn uses_setmaxnreg(&self) -> bool {
        let mut found = false;
        walk_insts(&self.blocks[0], &mut |inst, _| found |= matches!(inst, Inst::Sync(SyncOp::SetMaxNReg { .. })));
        found
    }

    /// Close the kernel reporting build errors, without checking it against its target
    /// (what the registry's ptxas matrix assembles, to see what ptxas says of ops the
    /// target lacks).
    ///
    /// A kernel that moves registers with `setmaxnreg` and declares its block shape but no
    /// register cap gets `.minnctapersm 1`, CUTLASS's `__launch_bounds__(threads, 1)`: ptxas
    /// then knows the register count at entry (65536 / threads) and honours `setmaxnreg`
    /// (without it, it ignores the instruction: C7508; `check_kernel` refuses that).
    pub fn finish_unchecked(mut self) -> Result<Kernel> {
        let b = &self.bounds;
        if self.uses_setmaxnreg()
            && b.maxnreg.is_none()
            && b.minnctapersm.is_none()
            && (b.reqntid.is_some() || b.maxntid.is_some())
        {
            self.bounds.minnctapersm = Some(1);
        }
        if self.blocks.len() != 1 {
            self.errors.push(Diagnostic { kernel: self.name.clone(), loc: None, message: "unclosed block".into() });
        }
        if let (Some(view), Some(tile)) = (self.raw_dynamic_view, self.dynamic.first()) {
            self.errors.push(Diagnostic {
                kernel: self.name.clone(),
                loc: Some(view),
                message: format!(
                    "a raw `dynamic_shared` view and typed tiles (`{}`, ...) both use the dynamic window: the view \
                     would alias the tiles; allocate this memory as a tile too",
                    tile.name
                ),
            });
        }
        if !self.errors.is_empty() {
            return Err(CodegenError { diagnostics: self.errors });
        }
        let parts = KernelParts {
            name: self.name,
            target: self.target,
            params: self.params,
            shared: self.shared,
            uses_dynamic_shared: self.uses_dynamic_shared,
            dynamic: self.dynamic,
            bounds: self.bounds,
            body: self.blocks.pop().unwrap_or_default(),
            num_regs: self.next_reg,
            watchdog: self.watchdog,
        };
        Ok(parts.into_kernel_unchecked())
    }
}

/// The checks of a finished kernel, whoever assembled it: its declared shared memory fits its
/// target, and [`check_kernel`].
fn check_finished(kernel: Kernel) -> Result<Kernel> {
    if let Some(p) = kernel.declared_shared_problem() {
        let loc = kernel.dynamic().last().and_then(|d| d.loc);
        return Err(CodegenError {
            diagnostics: vec![Diagnostic { kernel: kernel.name().to_owned(), loc, message: p }],
        });
    }
    check_kernel(&kernel)?;
    Ok(kernel)
}

impl KernelParts {
    /// The kernel these (edited) parts make, checked like [`KernelBuilder::finish`] checks a
    /// built one.
    pub fn finish(self) -> Result<Kernel> {
        check_finished(self.into_kernel_unchecked())
    }

    /// The kernel these parts make without checking it against its target: IR that a test
    /// wants a later stage (printer, simulator, launch) to refuse. The printer and the
    /// launch still check what they must.
    pub fn finish_unchecked(self) -> Kernel {
        self.into_kernel_unchecked()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fenced(target: Target) -> Kernel {
        let mut k = KernelBuilder::new("fenced", target);
        k.param("x", Type::U32);
        k.fence_proxy_async(ProxySpace::SharedCta);
        k.finish().unwrap()
    }

    #[test]
    fn parts_round_trip_and_an_edit_is_checked_again() {
        let k = fenced(Target::Sm90a);
        assert_eq!(k.to_parts().finish().unwrap(), k);
        // Edited parts are checked like a built kernel: the fence needs sm_90.
        let mut parts = k.to_parts();
        parts.target = Target::Sm80;
        let err = parts.clone().finish().unwrap_err().to_string();
        assert!(err.contains("but the kernel targets sm_80"), "{err}");
        assert_eq!(parts.finish_unchecked().target(), Target::Sm80);
        // A fresh register follows the kernel's own.
        let mut parts = k.into_parts();
        let n = parts.num_regs;
        assert_eq!(parts.fresh_reg(Type::U32), Reg { id: n, ty: Type::U32 });
        assert_eq!(parts.finish().unwrap().num_regs(), n + 1);
    }
}
