//! PTX text of one instruction, by family. Each returns the lines to print.

use super::operand::*;
use crate::ir::*;

pub struct InstCtx<'a> {
    pub kernel: &'a Kernel,
    /// Next unique label number in this kernel.
    pub labels: &'a mut u32,
    /// Blocking waits trap after this many nanoseconds (`None`: wait forever).
    pub wait_timeout_ns: Option<u64>,
    /// Suspend-time hint of the `try_wait`s of blocking waits.
    pub wait_suspend_hint_ns: Option<u32>,
    /// The layout of a blocking wait with a watchdog.
    pub wait_loop: super::wait_loop::WaitLoop,
    /// The module's PTX version: `.shared::cta` is spelled plain `.shared` before 7.8.
    pub version: crate::arch::PtxVersion,
    /// `printf`s printed so far in this kernel (each has its own format string symbol).
    pub printfs: &'a mut u32,
    /// Next blocking wait's site number (its index in [`Kernel::wait_sites`]).
    pub wait_sites: &'a mut u32,
    /// Whether a timed-out wait writes the watchdog record before it traps.
    pub watchdog_record: bool,
}

impl InstCtx<'_> {
    pub(crate) fn cta(&self) -> &'static str {
        if self.version >= crate::arch::PtxVersion::new(7, 8) {
            ".shared::cta"
        } else {
            ".shared"
        }
    }
}

pub fn lines(inst: &Inst, cx: &mut InstCtx) -> Vec<String> {
    match inst {
        Inst::Arith(op) => vec![arith(op)],
        Inst::ReadSpecial { dst, sreg } => vec![format!("mov.{} {}, {sreg};", sreg.ty(), reg(*dst))],
        Inst::Memory(op) => memory(op, cx),
        Inst::Mbarrier(op) => mbarrier(op, cx),
        Inst::Sync(op) => vec![sync(op)],
        Inst::Warp(op) => vec![super::warp::warp(op)],
        Inst::Printf(p) => {
            let n = *cx.printfs;
            *cx.printfs += 1;
            super::escape::printf(p, &format_symbol(cx.kernel.name(), n), n)
        }
        Inst::Asm(a) => super::escape::inline_asm(a),
        Inst::Tma(op) => vec![tma(op)],
        Inst::Tcgen05(op) => vec![super::tcgen05::tcgen05(op, cx)],
        Inst::Wgmma(op) => vec![super::wgmma::wgmma(op)],
        Inst::Fragment(op) => super::wgmma::fragment(op, cx),
        Inst::Probe { tag, values } => {
            let tag = super::names::comment_text(tag);
            vec![format!("// probe {tag}: {}", values.iter().map(value).collect::<Vec<_>>().join(", "))]
        }
        Inst::FlagSpin(s) => super::wait_loop::flag_spin(s, cx),
    }
}

fn arith(op: &ArithOp) -> String {
    match op {
        ArithOp::Mov { dst, src } => format!("mov.{} {}, {};", bits_ty(dst.ty), reg(*dst), value(src)),
        ArithOp::Unary { op, dst, a } => {
            let t = dst.ty;
            match op {
                UnOp::Not => format!("not.{} {}, {};", bits_ty(t), reg(*dst), value(a)),
                UnOp::Neg => format!("neg.{} {}, {};", arith_ty(t), reg(*dst), value(a)),
                UnOp::Abs => format!("abs.{} {}, {};", arith_ty(t), reg(*dst), value(a)),
            }
        }
        ArithOp::Binary { op, dst, a, b } => {
            let t = dst.ty;
            let name = match (op, t.is_float()) {
                (BinOp::Add, _) => format!("add.{}", arith_ty(t)),
                (BinOp::Sub, _) => format!("sub.{}", arith_ty(t)),
                (BinOp::Mul, false) => format!("mul.lo.{}", arith_ty(t)),
                (BinOp::Mul, true) => format!("mul.rn.{}", arith_ty(t)),
                (BinOp::Div, false) => format!("div.{}", arith_ty(t)),
                (BinOp::Div, true) => format!("div.rn.{}", arith_ty(t)),
                (BinOp::Rem, _) => format!("rem.{}", arith_ty(t)),
                (BinOp::Min, _) => format!("min.{}", arith_ty(t)),
                (BinOp::Max, _) => format!("max.{}", arith_ty(t)),
                (BinOp::And, _) => format!("and.{}", bits_ty(t)),
                (BinOp::Or, _) => format!("or.{}", bits_ty(t)),
                (BinOp::Xor, _) => format!("xor.{}", bits_ty(t)),
                (BinOp::Shl, _) => format!("shl.{}", bits_ty(t)),
                (BinOp::Shr, _) => format!("shr.{}", arith_ty(t)),
            };
            format!("{name} {}, {}, {};", reg(*dst), value(a), value(b))
        }
        ArithOp::Mad { dst, a, b, c } => {
            let t = dst.ty;
            let name = if t.is_float() { format!("fma.rn.{}", t.ptx()) } else { format!("mad.lo.{}", arith_ty(t)) };
            format!("{name} {}, {}, {}, {};", reg(*dst), value(a), value(b), value(c))
        }
        ArithOp::Setp { cmp, dst, a, b } => {
            let t = a.ty();
            let c = match (cmp, t.is_float()) {
                (CmpOp::Eq, _) => "eq",
                (CmpOp::Ne, false) => "ne",
                // Unordered not-equal so NaN != NaN is true, as in Rust.
                (CmpOp::Ne, true) => "neu",
                (CmpOp::Lt, _) => "lt",
                (CmpOp::Le, _) => "le",
                (CmpOp::Gt, _) => "gt",
                (CmpOp::Ge, _) => "ge",
            };
            format!("setp.{c}.{} {}, {}, {};", arith_ty(t), reg(*dst), value(a), value(b))
        }
        ArithOp::Selp { dst, cond, a, b } => {
            format!("selp.{} {}, {}, {}, {};", bits_ty(dst.ty), reg(*dst), value(a), value(b), value(cond))
        }
        ArithOp::Cvt { dst, src, rounding } => cvt(*dst, src, *rounding),
        ArithOp::Math { fun, dst, a } => format!("{}.{} {}, {};", fun.ptx(), dst.ty.ptx(), reg(*dst), value(a)),
        ArithOp::MathHalf2 { fun, half, dst, a } => {
            let ptx = fun.half2_ptx(*half).expect("the builder refuses a packed form PTX lacks");
            format!("{ptx} {}, {};", reg(*dst), value(a))
        }
        ArithOp::FloatBinary { op, dst, a, b } => {
            let t = dst.ty.ptx();
            match op {
                FloatBinOp::MinNaN => format!("min.NaN.{t} {}, {}, {};", reg(*dst), value(a), value(b)),
                FloatBinOp::MaxNaN => format!("max.NaN.{t} {}, {}, {};", reg(*dst), value(a), value(b)),
                // PTX copies the sign of its first source onto its second.
                FloatBinOp::Copysign => format!("copysign.{t} {}, {}, {};", reg(*dst), value(b), value(a)),
            }
        }
        ArithOp::Bitcast { dst, src } => format!("mov.{} {}, {};", bits_ty(dst.ty), reg(*dst), value(src)),
    }
}

fn cvt(dst: Reg, src: &Value, rounding: Option<Rounding>) -> String {
    let (d, s) = (dst.ty, src.ty());
    let rnd = match rounding.or(Rounding::of_cast(s, d)) {
        Some(r) => r.modifier(Rounding::integral(s, d)),
        None => "",
    };
    format!("cvt{rnd}.{}.{} {}, {};", arith_ty(d), arith_ty(s), reg(dst), value(src))
}

fn space_name(s: Space) -> &'static str {
    match s {
        Space::Global => "global",
        Space::Shared => "shared",
        Space::SharedCluster => "shared::cluster",
    }
}

fn addr(base: &Value, offset: i32) -> String {
    if offset == 0 {
        format!("[{}]", value(base))
    } else {
        format!("[{}+{}]", value(base), offset)
    }
}

fn memory(op: &MemoryOp, cx: &mut InstCtx) -> Vec<String> {
    let one = |s: String| vec![s];
    match op {
        MemoryOp::Ld { space, ty, dst, addr: a, offset, access } => {
            let v = access_qualifier(*access);
            one(format!("ld{v}.{}.{} {}, {};", space_name(*space), mem_ty(*ty), reg(*dst), addr(a, *offset)))
        }
        MemoryOp::St { space, ty, addr: a, offset, src, access } => {
            let v = access_qualifier(*access);
            one(format!("st{v}.{}.{} {}, {};", space_name(*space), mem_ty(*ty), addr(a, *offset), value(src)))
        }
        // A copy of the address the entry computed once (see `shared_base_reg`).
        MemoryOp::SharedAddr { dst, alloc } => {
            let name = &cx.kernel.alloc(*alloc).name;
            one(format!("mov.u32 {}, {};", reg(*dst), shared_base_reg(Some(name))))
        }
        MemoryOp::DynSharedAddr { dst } => one(format!("mov.u32 {}, {};", reg(*dst), shared_base_reg(None))),
        MemoryOp::ParamAddr { dst, param } => {
            let p = param_symbol(&cx.kernel.param(*param).name);
            vec![format!("mov.b64 {}, {p};", reg(*dst)), format!("cvta.param.u64 {}, {};", reg(*dst), reg(*dst))]
        }
        MemoryOp::CpAsync { dst, src, bytes } => {
            let cache = if *bytes == 16 { "cg" } else { "ca" };
            one(format!("cp.async.{cache}.shared.global [{}], [{}], {bytes};", value(dst), value(src)))
        }
        MemoryOp::CpAsyncCommitGroup => one("cp.async.commit_group;".into()),
        MemoryOp::CpAsyncMbarrierArrive { bar, noinc } => one(format!(
            "cp.async.mbarrier.arrive{}{}.b64 [{}];",
            if *noinc { ".noinc" } else { "" },
            cx.cta(),
            value(bar)
        )),
        MemoryOp::CpAsyncWaitGroup { n } => one(format!("cp.async.wait_group {n};")),
        MemoryOp::LdVec { space, ty, dsts, addr: a, offset, nc } => {
            let nc = if *nc { ".nc" } else { "" };
            let (v, d) = match dsts.as_slice() {
                [one] => (String::new(), reg(*one)),
                many => (
                    format!(".v{}", many.len()),
                    format!("{{{}}}", many.iter().map(|r| reg(*r)).collect::<Vec<_>>().join(", ")),
                ),
            };
            one(format!("ld.{}{nc}{v}.{} {d}, {};", space_name(*space), mem_ty(*ty), addr(a, *offset)))
        }
        MemoryOp::StVec { space, ty, addr: a, offset, srcs } => {
            let space = match space {
                Space::Shared => cx.cta(),
                s => match s {
                    Space::Global => ".global",
                    _ => ".shared::cluster",
                },
            };
            one(format!(
                "st{space}.v{}.{} {}, {{{}}};",
                srcs.len(),
                mem_ty(*ty),
                addr(a, *offset),
                srcs.iter().map(value).collect::<Vec<_>>().join(", ")
            ))
        }
        MemoryOp::Atom { op, order, space, ty, dst, addr: a, src, cmp } => {
            let mut q = String::new();
            if let Some(sem) = order.sem {
                q.push('.');
                q.push_str(sem.name());
            }
            if let Some(scope) = order.scope {
                q.push_str(&mem_scope_suffix(scope));
            }
            let t = atom_type(*op, *ty);
            let ops = match cmp {
                Some(c) => format!("{}, {}", value(c), value(src)),
                None => value(src),
            };
            one(match dst {
                Some(d) => {
                    format!("atom{q}.{}.{}.{t} {}, [{}], {ops};", space_name(*space), op.name(), reg(*d), value(a))
                }
                None => format!("red{q}.{}.{}.{t} [{}], {ops};", space_name(*space), op.name(), value(a)),
            })
        }
    }
}

/// The qualifiers of a plain load or store: none, `.volatile`, or `.sem.scope`.
fn access_qualifier(access: Access) -> String {
    match access {
        Access::Weak => String::new(),
        Access::Volatile => ".volatile".into(),
        Access::Strong(MemOrder { sem, scope }) => format!(".{}{}", sem.name(), mem_scope_suffix(scope)),
    }
}

/// The type suffix of an atomic: `.b32`/`.b64` for bit-size operations, `.u64` for a 64-bit
/// add (PTX has no `.add.s64`; two's complement makes it the same), else the element's.
fn atom_type(op: AtomOp, ty: Type) -> &'static str {
    if op.is_bitwise() {
        return ty.bit_type().ptx();
    }
    match (op, ty) {
        (AtomOp::Add, Type::S64) => "u64",
        (_, t) => arith_ty(t),
    }
}

fn mem_scope_suffix(s: MemScope) -> String {
    format!(".{}", s.name())
}

pub use super::names::{format_symbol, param_symbol, shared_symbol, DYN_SMEM};
pub use super::wait_loop::WAIT_SPINS_PER_CHECK;

/// The register holding a shared allocation's address (by the allocation's name; `None`: the
/// dynamic window), set once
/// at kernel entry. A `mov` of the symbol inside a loop makes ptxas re-read `SR_CgaCtaId`
/// (the shared window's cluster base) on every iteration; a register copy does not.
pub fn shared_base_reg(alloc_name: Option<&str>) -> String {
    match alloc_name {
        Some(name) => format!("%{}_addr", shared_symbol(name)),
        None => format!("%{DYN_SMEM}_addr"),
    }
}

fn order_suffix(o: &Ordering) -> String {
    let mut s = String::new();
    if let Some(sem) = o.sem {
        s.push_str(match sem {
            Sem::Release => ".release",
            Sem::Acquire => ".acquire",
            Sem::Relaxed => ".relaxed",
        });
    }
    if let Some(scope) = o.scope {
        // PTX requires a `.sem` whenever a `.scope` is given.
        if o.sem.is_none() {
            s.push_str(".release");
        }
        s.push_str(scope_suffix(scope));
    }
    s
}

pub(crate) fn wait_order_suffix(o: &Ordering) -> String {
    let mut s = String::new();
    match (o.sem, o.scope) {
        (None, None) => {}
        (sem, scope) => {
            s.push_str(match sem {
                Some(Sem::Relaxed) => ".relaxed",
                _ => ".acquire",
            });
            s.push_str(scope_suffix(scope.unwrap_or(Scope::Cta)));
        }
    }
    s
}

fn scope_suffix(s: Scope) -> &'static str {
    match s {
        Scope::Cta => ".cta",
        Scope::Cluster => ".cluster",
    }
}

fn bar_space(s: BarSpace, cta: &'static str) -> &'static str {
    match s {
        BarSpace::Cta => cta,
        BarSpace::Cluster => ".shared::cluster",
    }
}

fn mbarrier(op: &MbarrierOp, cx: &mut InstCtx) -> Vec<String> {
    let cta = cx.cta();
    let one = |s: String| vec![s];
    match op {
        MbarrierOp::Init { bar, count } => one(format!("mbarrier.init{cta}.b64 [{}], {};", value(bar), value(count))),
        MbarrierOp::Inval { bar } => one(format!("mbarrier.inval{cta}.b64 [{}];", value(bar))),
        MbarrierOp::Arrive { bar, count, order, space, state, drop } => {
            let name = if *drop { "arrive_drop" } else { "arrive" };
            let dst = state.map(reg).unwrap_or_else(|| "_".into());
            let c = count.map(|c| format!(", {}", value(&c))).unwrap_or_default();
            one(format!(
                "mbarrier.{name}{}{}.b64 {dst}, [{}]{c};",
                order_suffix(order),
                bar_space(*space, cta),
                value(bar)
            ))
        }
        MbarrierOp::ArriveExpectTx { bar, bytes, order, space, state } => {
            let dst = state.map(reg).unwrap_or_else(|| "_".into());
            one(format!(
                "mbarrier.arrive.expect_tx{}{}.b64 {dst}, [{}], {};",
                order_suffix(order),
                bar_space(*space, cta),
                value(bar),
                value(bytes)
            ))
        }
        MbarrierOp::ExpectTx { bar, bytes, scope, space } => one(format!(
            "mbarrier.expect_tx.relaxed{}{}.b64 [{}], {};",
            scope_suffix(*scope),
            bar_space(*space, cta),
            value(bar),
            value(bytes)
        )),
        MbarrierOp::CompleteTx { bar, bytes, scope, space } => one(format!(
            "mbarrier.complete_tx.relaxed{}{}.b64 [{}], {};",
            scope_suffix(*scope),
            bar_space(*space, cta),
            value(bar),
            value(bytes)
        )),
        MbarrierOp::TestWait { done, bar, on, order } => {
            let (form, arg) = wait_on(on);
            one(format!(
                "mbarrier.test_wait{form}{}{cta}.b64 {}, [{}], {arg};",
                wait_order_suffix(order),
                reg(*done),
                value(bar)
            ))
        }
        MbarrierOp::TryWait { done, bar, on, hint, order } => {
            let (form, arg) = wait_on(on);
            let h = hint.map(|h| format!(", {}", value(&h))).unwrap_or_default();
            one(format!(
                "mbarrier.try_wait{form}{}{cta}.b64 {}, [{}], {arg}{h};",
                wait_order_suffix(order),
                reg(*done),
                value(bar)
            ))
        }
        MbarrierOp::Wait { .. } => super::wait_loop::wait(op, cx),
        MbarrierOp::PendingCount { dst, state } => {
            one(format!("mbarrier.pending_count.b64 {}, {};", reg(*dst), value(state)))
        }
    }
}

pub(crate) fn wait_on(on: &WaitOn) -> (&'static str, String) {
    match on {
        WaitOn::Parity(p) => (".parity", value(p)),
        WaitOn::State(s) => ("", value(s)),
    }
}

fn sync(op: &SyncOp) -> String {
    match op {
        SyncOp::BarSync { id, count } => match count {
            Some(c) => format!("bar.sync {}, {};", value(id), value(c)),
            None => format!("bar.sync {};", value(id)),
        },
        SyncOp::BarArrive { id, count } => format!("bar.arrive {}, {};", value(id), value(count)),
        SyncOp::FenceMbarrierInit => "fence.mbarrier_init.release.cluster;".into(),
        SyncOp::FenceProxyAsync { space } => match space {
            ProxySpace::All => "fence.proxy.async;".into(),
            ProxySpace::SharedCta => "fence.proxy.async.shared::cta;".into(),
            ProxySpace::SharedCluster => "fence.proxy.async.shared::cluster;".into(),
            ProxySpace::Global => "fence.proxy.async.global;".into(),
        },
        SyncOp::MemBar { scope } => format!("fence.acq_rel.{};", scope.name()),
        SyncOp::WarpSync { mask } => format!("bar.warp.sync {};", mask_operand(mask)),
        SyncOp::ElectSync { pred } => format!("elect.sync _|{}, 0xffffffff;", reg(*pred)),
        SyncOp::ActiveMask { dst } => format!("activemask.b32 {};", reg(*dst)),
        SyncOp::SetMaxNReg { inc, count } => {
            format!("setmaxnreg.{}.sync.aligned.u32 {count};", if *inc { "inc" } else { "dec" })
        }
        SyncOp::Mapa { dst, addr, cta } => {
            format!("mapa.shared::cluster.u32 {}, {}, {};", reg(*dst), value(addr), value(cta))
        }
        SyncOp::ClusterArrive { relaxed } => {
            format!("barrier.cluster.arrive.{}.aligned;", if *relaxed { "relaxed" } else { "release" })
        }
        SyncOp::ClusterWait => "barrier.cluster.wait.acquire.aligned;".into(),
        SyncOp::Trap => "trap;".into(),
        SyncOp::Nanosleep { ns } => format!("nanosleep.u32 {};", value(ns)),
        SyncOp::GridDepWait => "griddepcontrol.wait;".into(),
        SyncOp::GridDepLaunchDependents => "griddepcontrol.launch_dependents;".into(),
    }
}

/// A lane mask: immediates in hex (`0xffffffff`), registers by name.
pub fn mask_operand(m: &Value) -> String {
    match m {
        Value::Imm { bits, .. } => format!("{:#010x}", *bits as u32),
        r => value(r),
    }
}

fn coords(c: &[Value]) -> String {
    c.iter().map(value).collect::<Vec<_>>().join(", ")
}

fn tma(op: &TmaOp) -> String {
    match op {
        TmaOp::LoadTensor { dst, tmap, coords: c, bar, multicast, cache_hint } => {
            let mc = if multicast.is_some() { ".multicast::cluster" } else { "" };
            let hint = if cache_hint.is_some() { ".L2::cache_hint" } else { "" };
            let mut s = format!(
                "cp.async.bulk.tensor.{}d.shared::cluster.global.mbarrier::complete_tx::bytes{mc}{hint} [{}], [{}, {{{}}}], [{}]",
                c.len(),
                value(dst),
                value(tmap),
                coords(c),
                value(bar)
            );
            if let Some(m) = multicast {
                s.push_str(&format!(", {}", value(m)));
            }
            if let Some(h) = cache_hint {
                s.push_str(&format!(", {}", value(h)));
            }
            s.push(';');
            s
        }
        TmaOp::StoreTensor { tmap, coords: c, src } => format!(
            "cp.async.bulk.tensor.{}d.global.shared::cta.bulk_group [{}, {{{}}}], [{}];",
            c.len(),
            value(tmap),
            coords(c),
            value(src)
        ),
        TmaOp::LoadBulk { dst, src, bytes, bar } => format!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{}], [{}], {}, [{}];",
            value(dst),
            value(src),
            value(bytes),
            value(bar)
        ),
        TmaOp::LoadBulkMulticast { dst, src, bytes, bar, cta_mask } => format!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{}], [{}], {}, [{}], {};",
            value(dst),
            value(src),
            value(bytes),
            value(bar),
            value(cta_mask)
        ),
        TmaOp::CopyBulkCluster { dst, src, bytes, bar } => format!(
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [{}], [{}], {}, [{}];",
            value(dst),
            value(src),
            value(bytes),
            value(bar)
        ),
        TmaOp::StoreBulk { dst, src, bytes } => {
            format!("cp.async.bulk.global.shared::cta.bulk_group [{}], [{}], {};", value(dst), value(src), value(bytes))
        }
        TmaOp::CommitGroup => "cp.async.bulk.commit_group;".into(),
        TmaOp::WaitGroup { n, read } => format!("cp.async.bulk.wait_group{} {n};", if *read { ".read" } else { "" }),
        TmaOp::PrefetchTensor { tmap, coords: c } => {
            format!("cp.async.bulk.prefetch.tensor.{}d.L2.global [{}, {{{}}}];", c.len(), value(tmap), coords(c))
        }
    }
}
