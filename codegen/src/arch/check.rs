//! Verification of a finished kernel: target/ISA availability and value ranges.
//! Runs on any IR (built by the DSL, the builder, or a test that edits IR by hand).

use super::isa::requirement;
use super::target::{PtxVersion, Target};
use crate::error::{CodegenError, Diagnostic, Result};
use crate::ir::*;

/// The newest PTX ISA the project emits by default: the H200's driver (CUDA 13.0) loads <= 9.0.
pub const MAX_PTX_LOADABLE: PtxVersion = PtxVersion::new(9, 0);

// The ranges live in the limits table; re-exported here for the checks' existing users.
use super::limits::Limits;
pub use super::limits::{MAX_ARRIVALS, MAX_NESTING_DEPTH, MAX_TX_BYTES, TMA_RANKS};
use super::wgmma;

/// The PTX ISA version a kernel's instructions and declarations need (whatever its target).
pub fn ops_ptx(k: &Kernel) -> PtxVersion {
    let mut version = PtxVersion::new(0, 0);
    walk_insts(k.body(), &mut |inst, _| version = version.max(requirement(inst).ptx));
    if k.bounds().cluster.is_some() {
        version = version.max(CLUSTER_PTX);
    }
    version
}

/// `.reqnctapercluster` / `.explicitcluster` appeared in PTX ISA 7.8.
const CLUSTER_PTX: PtxVersion = PtxVersion::new(7, 8);

/// The PTX ISA version a kernel is emitted with: what its target and its ops need.
pub fn needed_ptx(k: &Kernel) -> PtxVersion {
    k.target().min_ptx().max(ops_ptx(k))
}

/// Refuse control flow nested deeper than [`MAX_NESTING_DEPTH`], before any recursive walker
/// (check, printer, simulator, even `Clone`) sees the kernel.
pub fn check_nesting(k: &Kernel) -> Result<()> {
    let depth = k.nesting_depth();
    if depth > MAX_NESTING_DEPTH {
        return Err(CodegenError::new(
            k.name(),
            None,
            format!("control flow is nested {depth} levels deep; at most {MAX_NESTING_DEPTH} levels are supported"),
        ));
    }
    Ok(())
}

/// A block shape (`.reqntid`, `.maxntid`, or a launch's block): every dimension at least 1
/// and within the target's, and at most `max_threads_per_block` threads in all.
pub fn block_shape_problem(what: &str, dims: [u32; 3], limits: &Limits) -> Option<String> {
    let threads: u64 = dims.iter().map(|&d| d as u64).product();
    if dims.contains(&0) {
        return Some(format!("{what} {dims:?} has a zero dimension; every dimension must be at least 1"));
    }
    if let Some(d) = (0..3).find(|&d| dims[d] > limits.max_block_dims[d]) {
        return Some(format!("{what} {dims:?}: dimension {d} exceeds {}", limits.max_block_dims[d]));
    }
    if threads > limits.max_threads_per_block as u64 {
        return Some(format!(
            "{what} {dims:?} has {threads} threads; at most {} are allowed",
            limits.max_threads_per_block
        ));
    }
    None
}

/// `.maxnreg n`: ptxas wants 1..=255 (0 is an error, more is ignored).
pub fn max_registers_problem(n: u32, limits: &Limits) -> Option<String> {
    let most = limits.max_registers_per_thread;
    (n == 0 || n > most).then(|| format!("a register limit of {n} per thread is out of range: must be in 1..={most}"))
}

/// `.minnctapersm n`: 1..=the resident blocks an SM holds (ptxas errs on 0, ignores more).
pub fn min_blocks_problem(n: u32, limits: &Limits) -> Option<String> {
    let most = limits.max_blocks_per_sm;
    (n == 0 || n > most).then(|| format!("a minimum of {n} blocks per SM is out of range: must be in 1..={most}"))
}

/// How the launch-shape directives combine: ptxas refuses `.reqntid` with `.maxntid`.
/// (`.minnctapersm` without a block shape, or beyond the SM's threads, is a hint ptxas
/// ignores with a warning, so it is not refused.)
pub fn bounds_combination_problem(b: &LaunchBounds) -> Option<String> {
    (b.reqntid.is_some() && b.maxntid.is_some())
        .then(|| "a kernel declares an exact block shape (.reqntid) or a maximum (.maxntid), not both".into())
}

/// A thread-block cluster shape: clusters exist (sm_90+), every dimension at least 1, at most
/// the non-portable number of CTAs.
pub fn cluster_problem(c: [u32; 3], target: Target) -> Option<String> {
    let limits = target.limits();
    let n: u64 = c.iter().map(|&x| x as u64).product();
    let (portable, most) = (limits.max_cluster_ctas, limits.max_cluster_ctas_non_portable);
    if portable == 0 {
        Some(format!("thread-block clusters need sm_90 or newer, but the kernel targets {target}"))
    } else if n == 0 || n > most as u64 {
        Some(format!("cluster shape {c:?} has {n} CTAs; allowed is 1..={most} ({portable} portable)"))
    } else {
        None
    }
}

/// One static shared allocation: a memory type, at least one element, and a power-of-two
/// alignment the target's shared memory can honour.
pub fn shared_alloc_problems(name: &str, elem: Type, len: u32, align: u32, limits: &Limits) -> Vec<String> {
    let mut out = Vec::new();
    if len == 0 {
        out.push(format!("shared array `{name}` has length 0"));
    }
    if elem == Type::Pred {
        out.push(format!("shared array `{name}`: predicates have no memory form"));
    }
    let most = limits.max_shared_align();
    if !align.is_power_of_two() || align > most {
        out.push(format!("shared array `{name}`: alignment {align} must be a power of two in 1..={most}"));
    }
    out
}

/// Check a kernel and return the PTX ISA version it needs.
/// FP8 is a storage type: tiles and buffers hold it and wgmma reads it through descriptors,
/// but no instruction computes on a single FP8 value in a register.
pub fn fp8_register_problem(ty: Type) -> String {
    format!(
        "{ty} values live in shared-memory tiles and buffers only (wgmma reads them through descriptors): a register \
         cannot hold {ty}"
    )
}

pub fn check_kernel(k: &Kernel) -> Result<PtxVersion> {
    check_nesting(k)?;
    let mut diags = Vec::new();
    // An instruction unrolled N times breaks its rule once: each message is reported once
    // per place.
    let mut seen = std::collections::HashSet::new();
    let mut err = |loc: Option<SourceLoc>, msg: String| {
        if seen.insert((loc, msg.clone())) {
            diags.push(Diagnostic { kernel: k.name().to_owned(), loc, message: msg });
        }
    };
    if k.name().is_empty() {
        err(None, "a kernel needs a name (its PTX entry)".into());
    }
    let mut first_setmaxnreg = None;
    let b = k.bounds();
    let block_threads = b.reqntid.or(b.maxntid).map(|d| d.iter().map(|&x| x as u64).product::<u64>());
    walk_insts(k.body(), &mut |inst, loc| {
        if let Inst::Sync(SyncOp::BarSync { count: Some(count), .. } | SyncOp::BarArrive { count, .. }) = inst {
            if let (Some(x), Some(_)) = (count.as_imm_i128(), block_threads) {
                // Within any block is `value_problems`' rule; this adds the declared block's.
                if super::limits::named_barrier_count_problem(x, None).is_none() {
                    if let Some(p) = super::limits::named_barrier_count_problem(x, block_threads) {
                        err(loc, p);
                    }
                }
            }
        }
        if matches!(inst, Inst::Sync(SyncOp::SetMaxNReg { .. })) && first_setmaxnreg.is_none() {
            first_setmaxnreg = Some(loc);
        }
        let req = requirement(inst);
        if !req.available_on(k.target()) {
            let hint = match req.avail {
                super::isa::Avail::Only(ts) => format!("; compile for {}", ts[0]),
                super::isa::Avail::SmAtLeast(n) if n >= 90 => "; compile for sm_90a".to_string(),
                _ => String::new(),
            };
            err(
                loc,
                format!("{} needs {}, but the kernel targets {}{hint}", req.what, req.describe_avail(), k.target()),
            );
        }
        for msg in value_problems(inst) {
            err(loc, msg);
        }
        let mut fp8_regs = inst.regs_used();
        fp8_regs.extend(inst.regs_defined());
        if let Some(r) = fp8_regs.into_iter().find(|r| r.ty.is_fp8()) {
            err(loc, fp8_register_problem(r.ty));
        }
    });
    for (loc, msg) in super::tcgen05::cta_group_conflicts(k) {
        err(loc, msg);
    }
    let limits = k.target().limits();
    let bound_problems = [
        b.cluster.and_then(|c| cluster_problem(c, k.target())),
        b.reqntid.and_then(|t| block_shape_problem("block shape", t, limits)),
        b.maxntid.and_then(|t| block_shape_problem("maximum block shape (.maxntid)", t, limits)),
        b.maxnreg.and_then(|n| max_registers_problem(n, limits)),
        b.minnctapersm.and_then(|n| min_blocks_problem(n, limits)),
        bounds_combination_problem(b),
    ];
    for p in bound_problems.into_iter().flatten() {
        err(None, p);
    }
    if let Some(loc) = first_setmaxnreg {
        let shape = (b.reqntid.is_some() || b.maxntid.is_some()) && b.minnctapersm.is_some();
        if let Some(p) = super::limits::setmaxnreg_entry_count_problem(b.maxnreg.is_some(), shape) {
            err(loc, p.into());
        }
    }
    for a in k.shared() {
        for p in shared_alloc_problems(&a.name, a.elem, a.len, a.align, limits) {
            err(a.loc, p);
        }
    }
    let version = needed_ptx(k);
    let layout = k.shared_layout();
    if let Some(i) = layout.first_over(limits.max_static_shared) {
        let (a, p) = (&k.shared()[i], layout.placements[i]);
        err(
            a.loc,
            format!(
                "shared array `{}` ({} bytes at offset {}) ends at byte {}, past the {} KiB static shared memory \
                 limit of {} (static total {} bytes); use dynamic shared memory",
                a.name,
                p.end - p.start,
                p.start,
                p.end,
                limits.max_static_shared / 1024,
                k.target(),
                layout.static_bytes,
            ),
        );
    }
    if diags.is_empty() {
        Ok(version)
    } else {
        Err(CodegenError { diagnostics: diags })
    }
}

fn range_check(what: &str, v: &Value, lo: i128, hi: i128, out: &mut Vec<String>) {
    if let Some(x) = v.as_imm_i128() {
        if x < lo || x > hi {
            out.push(format!("{what} {x} is out of range: must be in {lo}..={hi}"));
        }
    }
}

fn bar_addr_check(bar: &Value, space: BarSpace, out: &mut Vec<String>) {
    let ty = bar.ty();
    if !matches!(ty, Type::U32 | Type::B32 | Type::S32) {
        let want = match space {
            BarSpace::Cta => "a 32-bit shared::cta address",
            BarSpace::Cluster => "a 32-bit shared::cluster address (from `mapa`)",
        };
        out.push(format!("mbarrier operand has type {ty}; expected {want} of an 8-byte shared-memory barrier"));
    }
    if let Value::Imm { bits, .. } = bar {
        if bits % 8 != 0 {
            out.push(format!("mbarrier address {bits:#x} is not 8-byte aligned"));
        }
    }
}

/// Range and type problems of one instruction's operands.
pub fn value_problems(inst: &Inst) -> Vec<String> {
    let mut out = Vec::new();
    match inst {
        Inst::Mbarrier(op) => match op {
            MbarrierOp::Init { bar, count } => {
                bar_addr_check(bar, BarSpace::Cta, &mut out);
                range_check("mbarrier arrival count", count, 1, MAX_ARRIVALS, &mut out);
            }
            MbarrierOp::Arrive { bar, count, space, state, .. } => {
                bar_addr_check(bar, *space, &mut out);
                if let Some(c) = count {
                    range_check("mbarrier arrive count", c, 1, MAX_ARRIVALS, &mut out);
                }
                if *space == BarSpace::Cluster && state.is_some() {
                    out.push("a remote (`.shared::cluster`) arrive returns no state token".into());
                }
            }
            MbarrierOp::ArriveExpectTx { bar, bytes, space, state, .. } => {
                bar_addr_check(bar, *space, &mut out);
                range_check("expect_tx byte count", bytes, 0, MAX_TX_BYTES, &mut out);
                if *space == BarSpace::Cluster && state.is_some() {
                    out.push("a remote (`.shared::cluster`) arrive returns no state token".into());
                }
            }
            MbarrierOp::ExpectTx { bar, bytes, space, .. } | MbarrierOp::CompleteTx { bar, bytes, space, .. } => {
                bar_addr_check(bar, *space, &mut out);
                range_check("tx byte count", bytes, 0, MAX_TX_BYTES, &mut out);
            }
            MbarrierOp::TestWait { bar, on, .. }
            | MbarrierOp::TryWait { bar, on, .. }
            | MbarrierOp::Wait { bar, on, .. } => {
                bar_addr_check(bar, BarSpace::Cta, &mut out);
                if let WaitOn::Parity(p) = on {
                    out.extend(p.as_imm_i128().and_then(super::parity::value_problem));
                }
            }
            MbarrierOp::Inval { bar } => bar_addr_check(bar, BarSpace::Cta, &mut out),
            MbarrierOp::PendingCount { .. } => {}
        },
        Inst::Sync(op) => match op {
            SyncOp::SetMaxNReg { count, .. } => out.extend(super::limits::setmaxnreg_problem(*count)),
            // The block's size is checked by `check_kernel`, which knows the declared shape.
            SyncOp::BarSync { id, count: Some(count) } | SyncOp::BarArrive { id, count } => {
                out.extend(id.as_imm_i128().and_then(super::limits::named_barrier_id_problem));
                out.extend(count.as_imm_i128().and_then(|x| super::limits::named_barrier_count_problem(x, None)));
            }
            SyncOp::BarSync { id, count: None } => {
                out.extend(id.as_imm_i128().and_then(super::limits::named_barrier_id_problem))
            }
            SyncOp::WarpSync { mask } => mask_check("bar.warp.sync", mask, &mut out),
            SyncOp::Nanosleep { ns } => {
                if !is_int32(ns.ty()) {
                    out.push(format!("nanosleep takes a u32 number of nanoseconds, found {}", ns.ty()));
                }
            }
            // No operand of these has a value rule (registers and fixed encodings).
            SyncOp::FenceMbarrierInit
            | SyncOp::FenceProxyAsync { .. }
            | SyncOp::MemBar { .. }
            | SyncOp::ElectSync { .. }
            | SyncOp::ActiveMask { .. }
            | SyncOp::Mapa { .. }
            | SyncOp::ClusterArrive { .. }
            | SyncOp::ClusterWait
            | SyncOp::Trap
            | SyncOp::GridDepWait
            | SyncOp::GridDepLaunchDependents => {}
        },
        Inst::Tma(op) => {
            if let Some(r) = op.rank() {
                if !u8::try_from(r).is_ok_and(|r| TMA_RANKS.contains(&r)) {
                    let (lo, hi) = (TMA_RANKS.start(), TMA_RANKS.end());
                    out.push(format!("a tensor copy has rank {r}; TMA supports {lo} to {hi} dimensions"));
                }
            }
            if let TmaOp::LoadBulk { bytes, .. }
            | TmaOp::StoreBulk { bytes, .. }
            | TmaOp::LoadBulkMulticast { bytes, .. }
            | TmaOp::CopyBulkCluster { bytes, .. } = op
            {
                if let Some(b) = bytes.as_imm_i128() {
                    if b <= 0 || b % 16 != 0 {
                        out.push(format!("bulk copy size {b} must be a positive multiple of 16 bytes"));
                    }
                }
            }
        }
        Inst::Wgmma(op) => match op {
            WgmmaOp::MmaAsync(m) => wgmma_problems(m, &mut out),
            WgmmaOp::Fence | WgmmaOp::CommitGroup | WgmmaOp::WaitGroup { .. } => {}
        },
        Inst::Tcgen05(op) => super::tcgen05::value_problems(op, &mut out),
        Inst::Fragment(op) => fragment_problems(op, &mut out),
        Inst::Warp(op) => warp_problems(op, &mut out),
        Inst::Memory(op) => memory_problems(op, &mut out),
        Inst::Printf(p) => {
            let types: Vec<Type> = p.args.iter().map(|a| a.ty()).collect();
            out.extend(crate::ir::escape::format_problems(&p.format, &types));
        }
        Inst::Asm(a) => {
            out.extend(crate::ir::escape::template_problems(&a.template, a.inputs.len() + a.outputs.len()));
            out.extend(crate::emit::escape::printer_name_problems(&a.template));
        }
        // Registers and immediates of any value are valid operands of these.
        Inst::Arith(_) | Inst::ReadSpecial { .. } | Inst::Probe { .. } | Inst::FlagSpin(_) => {}
    }
    out
}

fn is_int32(t: Type) -> bool {
    t.is_int() && t.size() == 4
}

fn mask_check(what: &str, mask: &Value, out: &mut Vec<String>) {
    if !is_int32(mask.ty()) {
        out.push(format!("the member mask of {what} is a 32-bit lane mask (u32), found {}", mask.ty()));
    }
}

/// Types, widths and masks of the warp collectives (PTX ISA `shfl.sync`, `vote.sync`,
/// `redux.sync`, `match.sync`).
fn warp_problems(op: &WarpOp, out: &mut Vec<String>) {
    let what = op.mnemonic();
    mask_check(&what, op.mask(), out);
    match op {
        WarpOp::Shfl { src, lane, width, dst, .. } => {
            if src.ty().size() != 4 || dst.ty != src.ty() {
                out.push(format!("{what} moves 32-bit values; found {} (convert with `as u32`/`as f32`)", src.ty()));
            }
            if !is_int32(lane.ty()) {
                out.push(format!("the lane operand of {what} is a 32-bit integer, found {}", lane.ty()));
            }
            if !width.is_power_of_two() || *width > 32 {
                out.push(format!("shuffle width {width} must be a power of two in 1..=32 (the lanes of one segment)"));
            }
        }
        WarpOp::Vote { pred, mode, dst, .. } => {
            if pred.ty() != Type::Pred {
                out.push(format!("{what} votes on a bool, found {} (compare explicitly, e.g. `x != 0`)", pred.ty()));
            }
            let want = if *mode == VoteMode::Ballot { 4 } else { 0 };
            if dst.ty.size() != want {
                out.push(format!("{what} has a {} result, not {}", if want == 4 { "u32" } else { "bool" }, dst.ty));
            }
        }
        WarpOp::Redux { src, dst, .. } => {
            if !is_int32(src.ty()) || dst.ty != src.ty() {
                out.push(format!("{what} reduces 32-bit integers (u32 or i32), found {}", src.ty()));
            }
        }
        WarpOp::Match { src, dst, .. } => {
            if !matches!(src.ty().size(), 4 | 8) || src.ty().is_float() {
                out.push(format!("{what} compares 32- or 64-bit integers, found {}", src.ty()));
            }
            if !is_int32(dst.ty) {
                out.push(format!("{what} returns a lane mask (u32), not {}", dst.ty));
            }
        }
    }
}

/// The address width a space needs.
fn addr_bits(space: Space) -> u32 {
    if space == Space::Global {
        64
    } else {
        32
    }
}

/// Vector loads and stores, atomics.
fn memory_problems(op: &MemoryOp, out: &mut Vec<String>) {
    match op {
        MemoryOp::LdVec { space, ty, dsts, addr, offset, nc } => {
            let n = dsts.len() as u32;
            if ![1, 2, 4].contains(&n) || *ty == Type::Pred {
                out.push(format!("a vector load of {n} x {ty}: 1, 2 or 4 elements"));
            } else if ty.size() * n > 16 {
                out.push(format!(
                    "a vector load of {n} x {ty} is {} bytes; one load moves at most 16 (`T.ld.v{}` for {ty})",
                    ty.size() * n,
                    16 / ty.size()
                ));
            }
            if let Some(d) = dsts.iter().find(|d| d.ty != *ty) {
                out.push(format!("a vector load of {ty} into a {} register", d.ty));
            }
            if (*offset as i64).rem_euclid((ty.size() * n).max(1) as i64) != 0 {
                out.push(format!(
                    "a {}-byte vector load at byte offset {offset} is misaligned: its first element index must be a \
                     multiple of {n}",
                    ty.size() * n
                ));
            }
            if *nc && *space != Space::Global {
                out.push("`ld.nc` (the read-only data cache) reads global memory only".into());
            }
            if addr.ty().bits() != addr_bits(*space) {
                out.push(format!("a {space:?} load needs a {}-bit address, found {}", addr_bits(*space), addr.ty()));
            }
        }
        MemoryOp::StVec { ty, srcs, offset, space, addr } => {
            let n = srcs.len() as u32;
            if ![2, 4].contains(&n) || ty.size() * n > 16 || *ty == Type::Pred {
                out.push(format!("a vector store of {n} x {ty}: v2 or v4 of at most 16 bytes in all"));
            }
            if let Some(s) = srcs.iter().find(|s| s.ty() != *ty) {
                out.push(format!("a vector store of {ty} given a {} value", s.ty()));
            }
            if (*offset as i64).rem_euclid((ty.size() * n).max(1) as i64) != 0 {
                out.push(format!(
                    "a {}-byte vector store at byte offset {offset} is misaligned: its first element index must be \
                     a multiple of {n}",
                    ty.size() * n
                ));
            }
            let want = addr_bits(*space) / 8;
            if addr.ty().size() != want {
                out.push(format!("a {space:?} vector store needs a {}-bit address, found {}", want * 8, addr.ty()));
            }
        }
        MemoryOp::Atom { op, order, space, ty, dst, addr, src, cmp } => {
            let what = if dst.is_some() { "atom" } else { "red" };
            let name = format!("{what}.{}", op.name());
            let ok = match op {
                AtomOp::Add => matches!(ty, Type::U32 | Type::S32 | Type::U64 | Type::S64 | Type::F32 | Type::F64),
                AtomOp::Min | AtomOp::Max => matches!(ty, Type::U32 | Type::S32 | Type::U64 | Type::S64),
                _ => matches!(ty.size(), 4 | 8) && *ty != Type::Pred,
            };
            if !ok {
                let want = match op {
                    AtomOp::Add => "u32, i32, u64, i64, f32 or f64",
                    AtomOp::Min | AtomOp::Max => "u32, i32, u64 or i64 (integers only)",
                    _ => "32- or 64-bit values",
                };
                out.push(format!("`{name}` works on {want}, not {ty}"));
            }
            if src.ty() != *ty || cmp.is_some_and(|c| c.ty() != *ty) || dst.is_some_and(|d| d.ty != *ty) {
                out.push(format!("`{name}` on {ty} given a {} operand", src.ty()));
            }
            if (*op == AtomOp::Cas) != cmp.is_some() {
                out.push("`cas` (and only `cas`) takes a compare value".into());
            }
            if dst.is_none() && matches!(op, AtomOp::Cas | AtomOp::Exch) {
                out.push(format!("`red` has no `{}`: it returns nothing, use `atom`", op.name()));
            }
            if dst.is_none() && matches!(order.sem, Some(AtomSem::Acquire | AtomSem::AcqRel)) {
                out.push("`red` has `.relaxed` or `.release` semantics: it reads nothing to acquire".into());
            }
            if addr.ty().bits() != addr_bits(*space) {
                out.push(format!(
                    "an atomic on {space:?} needs a {}-bit address, found {}",
                    addr_bits(*space),
                    addr.ty()
                ));
            }
        }
        MemoryOp::CpAsync { bytes, .. } => {
            if ![4, 8, 16].contains(bytes) {
                out.push(format!("cp.async copies 4, 8 or 16 bytes, not {bytes}"));
            }
        }
        MemoryOp::Ld { access, .. } | MemoryOp::St { access, .. } => {
            if let Access::Strong(order) = access {
                out.extend(order.problem(matches!(op, MemoryOp::Ld { .. })));
            }
        }
        // Addresses and registers of any value; the types are the builder's to get right.
        MemoryOp::SharedAddr { .. }
        | MemoryOp::DynSharedAddr { .. }
        | MemoryOp::ParamAddr { .. }
        | MemoryOp::CpAsyncCommitGroup
        | MemoryOp::CpAsyncMbarrierArrive { .. }
        | MemoryOp::CpAsyncWaitGroup { .. } => {}
    }
}

/// The PTX version and target of a module: every kernel must share one target.
pub fn module_ptx_version(m: &Module, max: PtxVersion) -> Result<(Target, PtxVersion)> {
    let Some(first) = m.kernels.first() else {
        return Err(CodegenError::new("<module>", None, "a module needs at least one kernel"));
    };
    let mut diags = Vec::new();
    let mut version = PtxVersion::new(0, 0);
    for k in &m.kernels {
        if k.target() != first.target() {
            diags.push(Diagnostic {
                kernel: k.name().to_owned(),
                loc: None,
                message: format!(
                    "targets {} but kernel `{}` in the same module targets {}; put them in separate modules",
                    k.target(),
                    first.name(),
                    first.target()
                ),
            });
            continue;
        }
        match check_kernel(k) {
            Ok(v) => version = version.max(v),
            Err(e) => diags.extend(e.diagnostics),
        }
    }
    if diags.is_empty() && version > max {
        diags.push(Diagnostic {
            kernel: first.name().to_owned(),
            loc: None,
            message: format!("needs PTX ISA {version}, newer than the {max} the target driver loads"),
        });
    }
    let mut names: Vec<&str> = m.kernels.iter().map(|k| k.name()).collect();
    names.sort();
    if names.windows(2).any(|w| w[0] == w[1]) {
        diags.push(Diagnostic {
            kernel: first.name().to_owned(),
            loc: None,
            message: "two kernels in one module share a name".into(),
        });
    }
    if diags.is_empty() {
        Ok((first.target(), version))
    } else {
        Err(CodegenError { diagnostics: diags })
    }
}

/// Shapes and operand types of `wgmma.mma_async` (PTX ISA "Matrix Shape" and syntax tables).
fn wgmma_problems(m: &MmaAsync, out: &mut Vec<String>) {
    if let Some(rule) = wgmma::n_problem(m.n) {
        out.push(format!("wgmma N = {}: {rule}", m.n));
    }
    if m.d.len() as u32 != wgmma::accumulator_len(m.n) {
        out.push(format!(
            "wgmma m{}n{} accumulates into {} f32 registers per thread, {} given",
            wgmma::M,
            m.n,
            wgmma::accumulator_len(m.n),
            m.d.len()
        ));
    }
    if let Some(r) = m.d.iter().find(|r| r.ty != Type::F32) {
        out.push(format!("wgmma accumulators are f32 registers, found a {}", r.ty));
    }
    if let Some(p) = wgmma::types_problem(m.a_ty, m.b_ty) {
        out.push(p);
    }
    let major = |trans: bool| if trans { Major::MN } else { Major::K };
    for (elem, trans) in [(m.a_ty, m.trans_a), (m.b_ty, m.trans_b)] {
        if let Some(p) = wgmma::major_problem(elem, major(trans)) {
            out.push(p.into());
            break;
        }
    }
    match &m.a {
        WgmmaA::Desc(v) => {
            if v.ty().size() != 8 {
                out.push(format!("the A matrix descriptor must be 64-bit, found {}", v.ty()));
            }
        }
        WgmmaA::Regs(rs) => {
            if let Some(p) = wgmma::register_a_major_problem(major(m.trans_a)) {
                out.push(p.into());
            }
            if let Some(r) = rs.iter().find(|r| r.ty().size() != 4 || r.ty().is_float()) {
                out.push(format!("an A fragment register must be a 32-bit packed pair (b32), found {}", r.ty()));
            }
        }
    }
    if m.b_desc.ty().size() != 8 {
        out.push(format!("the B matrix descriptor must be 64-bit, found {}", m.b_desc.ty()));
    }
    if m.scale_d.ty() != Type::Pred {
        out.push(format!("wgmma scale-d is a predicate (false: D = A*B), found {}", m.scale_d.ty()));
    }
}

fn fragment_problems(op: &FragmentOp, out: &mut Vec<String>) {
    match op {
        FragmentOp::PackHalf2 { dst, hi, lo, to } => {
            if !matches!(to, Type::BF16 | Type::F16) {
                out.push(format!("packing to {to}x2: only bf16x2 and f16x2 exist"));
            }
            if dst.ty.size() != 4 || dst.ty.is_float() {
                out.push(format!("a packed half pair goes into a b32 register, not {}", dst.ty));
            }
            if hi.ty() != Type::F32 || lo.ty() != Type::F32 {
                out.push(format!("packing converts two f32 values, found {} and {}", hi.ty(), lo.ty()));
            }
        }
        FragmentOp::PackFp8x2 { dst, hi, lo, to } => {
            if !to.is_fp8() {
                out.push(format!("packing to {to}x2 with satfinite: only e4m3x2 and e5m2x2 exist"));
            }
            if dst.ty.size() != 2 || dst.ty.is_float() {
                out.push(format!("a packed FP8 pair goes into a b16 register, not {}", dst.ty));
            }
            if hi.ty() != Type::F32 || lo.ty() != Type::F32 {
                out.push(format!("packing to FP8 converts two f32 values, found {} and {}", hi.ty(), lo.ty()));
            }
        }
        FragmentOp::StMatrix { addr, regs, .. } => {
            if ![1, 2, 4].contains(&regs.len()) {
                out.push(format!("stmatrix stores 1, 2 or 4 matrices (.x1/.x2/.x4), not {}", regs.len()));
            }
            if let Some(r) = regs.iter().find(|r| r.ty().size() != 4 || r.ty().is_float()) {
                out.push(format!("stmatrix stores b32 registers (two b16 each), found {}", r.ty()));
            }
            if addr.ty().size() != 4 {
                out.push(format!("stmatrix takes a 32-bit shared address, found {}", addr.ty()));
            }
        }
        FragmentOp::LdMatrix { addr, dsts, .. } => {
            if ![1, 2, 4].contains(&dsts.len()) {
                out.push(format!("ldmatrix loads 1, 2 or 4 matrices (.x1/.x2/.x4), not {}", dsts.len()));
            }
            if let Some(r) = dsts.iter().find(|r| r.ty.size() != 4 || r.ty.is_float()) {
                out.push(format!("ldmatrix loads into b32 registers (two b16 each), found {}", r.ty));
            }
            if addr.ty().size() != 4 {
                out.push(format!("ldmatrix takes a 32-bit shared address, found {}", addr.ty()));
            }
        }
        FragmentOp::UnpackHalf2 { lo, hi, src, from } => {
            if !matches!(from, Type::BF16 | Type::F16) {
                out.push(format!("unpacking {from}x2: only bf16x2 and f16x2 exist"));
            }
            if src.ty().size() != 4 || src.ty().is_float() {
                out.push(format!("a packed half pair is a 32-bit integer (u32), not {}", src.ty()));
            }
            if lo.ty != Type::F32 || hi.ty != Type::F32 {
                out.push("a half pair unpacks into two f32 values".into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::KernelBuilder;
    use crate::Target;

    /// An instruction built once per iteration of an unrolled loop breaks its rule once.
    #[test]
    fn a_repeated_problem_is_reported_once_per_place() {
        let mut k = KernelBuilder::new("k", Target::Sm90a);
        for _ in 0..4 {
            k.setmaxnreg(true, 30);
        }
        k.setmaxnreg(true, 30); // another place
        let e = k.finish().unwrap_err();
        let bad: Vec<_> = e.diagnostics.iter().filter(|d| d.message.contains("setmaxnreg count 30")).collect();
        assert_eq!(bad.len(), 2, "{e}");
        assert_ne!(bad[0].loc, bad[1].loc);
    }

    /// FP8 is a storage type: loading one element into a register is refused, with the rule.
    #[test]
    fn an_fp8_register_is_refused() {
        use crate::ir::{Type, Value};
        for ty in [Type::E4M3, Type::E5M2] {
            let mut k = KernelBuilder::new("k", Target::Sm90a);
            let x = k.param_global("x", ty, false);
            let y = k.param_global("y", Type::F32, true);
            let v = k.ld_global(x, Value::u32(0));
            let f = k.cvt(v, Type::F32);
            k.st_global(y, Value::u32(0), f);
            let e = k.finish().unwrap_err();
            assert!(e.diagnostics.iter().any(|d| d.message == super::fp8_register_problem(ty)), "{e}");
        }
    }
}
