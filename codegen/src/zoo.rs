//! The op zoo: every op form the printer can emit for a target, in two parts.
//!
//! - [`registry_zoo`]: one kernel per variant of every op of the registry (each choice,
//!   optional arguments given and omitted, registers and literals) that the target supports,
//!   derived from the registry, so a new op or choice joins the zoo by being registered.
//! - [`op_zoo`]: one kernel with the builder's own forms that no registry op spells alone:
//!   arithmetic and conversions on every type class, control flow, the mbarrier family's
//!   options, TMA and bulk copies, fences; its PTX is pinned by snapshot tests.
//!
//! [`zoo`] is both as one module; `codegen/tests/zoo_ptxas.rs` assembles it for every target
//! and checks that every registry variant is in it on some target.

use crate::arch::check::check_kernel;
use crate::arch::Target;
use crate::builder::{ArriveOpts, KernelBuilder};
use crate::error::Result;
use crate::ir::*;
use crate::registry::{self, variant_kernel, variants};
use crate::Kernel;

/// One registry variant's kernel in the zoo.
#[derive(Clone, Debug)]
pub struct ZooEntry {
    /// The op's path after `T.` (`ptx.mbarrier.arrive`).
    pub op: &'static str,
    /// Which variant (`"relaxed", "cluster"; literals`), as [`registry::Variant`] labels it.
    pub variant: String,
    pub kernel: Kernel,
}

/// [`op_zoo`] and [`registry_zoo`] on `target`, as one module.
pub fn zoo(target: Target) -> Result<Module> {
    let mut kernels = vec![op_zoo(target)?];
    kernels.extend(registry_zoo(target)?.into_iter().map(|e| e.kernel));
    Ok(Module::new(kernels))
}

/// Every variant of every registry op that `target`'s check accepts, one kernel each (named
/// `zoo_<n>_<op>`, unique in a module).
pub fn registry_zoo(target: Target) -> Result<Vec<ZooEntry>> {
    let mut out = Vec::new();
    for op in registry::ops() {
        for v in variants(op) {
            let kernel = variant_kernel(op, &v, target)?;
            if check_kernel(&kernel).is_err() {
                continue;
            }
            let mut parts = kernel.into_parts();
            parts.name = format!("zoo_{}_{}", out.len(), op.path.replace('.', "_"));
            let kernel = parts.finish()?;
            let form = if v.literals { "literals" } else { "registers" };
            let variant = if v.label.is_empty() { form.to_string() } else { format!("{}; {form}", v.label) };
            out.push(ZooEntry { op: op.path, variant, kernel });
        }
    }
    Ok(out)
}

/// The builder's own op forms available on `target` (sm_90a: all Hopper forms; sm_100a adds
/// tcgen05's fences and commit; sm_80: the Ampere subset); the registry's ops are
/// [`registry_zoo`]'s.
pub fn op_zoo(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new(format!("op_zoo_{}", target.name()), target);
    let hopper = target.sm() >= 90;
    let out = k.param_global("out", Type::U32, true);
    let fout = k.param_global("fout", Type::F32, true);
    let hout = k.param_global("hout", Type::F16, true);
    let n = k.param("n", Type::U32);
    let x = k.param("x", Type::F32);
    let big = k.param("big", Type::U64);
    let s = k.param("s", Type::S32);
    let tmap = if hopper { Some(k.param_tensor_map("tmap", 2)) } else { None };
    k.max_block(128, 1, 1);
    let bars = k.alloc_barriers("bars", 4);
    let smem = k.alloc_shared("tile", Type::F32, 256);
    let hsm = k.alloc_shared("htile", Type::F16, 16);

    // Special registers and arithmetic on every type class.
    let tid = k.thread_idx(Dim::X);
    let _ = k.block_idx(Dim::Y);
    let _ = k.block_dim(Dim::Z);
    let _ = k.grid_dim(Dim::X);
    let lane = k.lane_idx();
    let warp = k.warp_idx();
    let _ = k.warpgroup_idx();
    let a = k.add(tid, n);
    let b = k.sub(a, lane);
    let c = k.mul(b, warp);
    let d = k.div(c, Value::u32(3));
    let e = k.rem(d, Value::u32(7));
    let f = k.min(e, Value::u32(5));
    let g = k.max(f, lane);
    let h = k.and(g, Value::u32(0xff));
    let i = k.or(h, Value::u32(0x100));
    let j = k.xor(i, tid);
    let l = k.shl(j, Value::u32(2));
    let m = k.shr(l, Value::u32(1));
    let nn = k.not(m);
    let ss = k.cvt(nn, Type::S32);
    let ss = k.add(ss, s);
    let ss = k.neg(ss);
    let ss = k.unary(UnOp::Abs, ss);
    let ss = k.shr(ss, Value::u32(1));
    let wide = k.cvt(ss, Type::U64);
    let wide = k.mad(wide, big, Value::u64(3));
    let wide = k.shl(wide, Value::u32(1));
    let back = k.cvt(wide, Type::U32);
    let p = k.lt(back, n);
    let q = k.ge(tid, Value::u32(4));
    let pq = k.and(p, q);
    let r = k.or(pq, p);
    let r = k.not(r);
    let sel = k.select(r, tid, back);
    let fx = k.cvt(sel, Type::F32);
    let fy = k.mul(fx, x);
    let fz = k.add(fy, Value::f32(0.5));
    let fz = k.div(fz, x);
    let fz = k.mad(fz, x, fy);
    let fz = k.neg(fz);
    let fz = k.unary(UnOp::Abs, fz);
    let fz = k.min(fz, Value::f32(100.0));
    let fd = k.cvt(fz, Type::F64);
    let fd = k.mul(fd, Value::f64(2.0));
    let fz = k.cvt(fd, Type::F32);
    let fi = k.cvt(fz, Type::S32);
    let fne = k.ne(fz, x);
    let half = k.cvt(fz, Type::F16);
    let half_back = k.cvt(half, Type::F32);
    if hopper {
        let bf = k.cvt(fz, Type::BF16);
        let _ = k.cvt(bf, Type::F32);
    }
    // The f64 float functions and every rounding of a conversion (the registry samples f32).
    let fdd = k.math(MathFn::RcpRn, fd);
    let fdd = k.math(MathFn::SqrtRn, fdd);
    let _ = k.copysign(fdd, fd);
    for r in Rounding::ALL {
        let _ = k.cvt_rounded(fd, Type::F32, r);
        let _ = k.cvt_rounded(fz, Type::F16, r);
        let _ = k.cvt_rounded(fz, Type::S32, r);
        let _ = k.cvt_rounded(fz, Type::F32, r);
        let _ = k.cvt_rounded(fd, Type::U64, r);
        if hopper {
            let _ = k.cvt_rounded(fz, Type::BF16, r);
        }
    }

    // Memory: global and shared loads/stores, atomics, cp.async.
    let v = k.ld_global(out, tid);
    k.st_global(out, tid, v);
    let fu = k.cvt(fi, Type::U32);
    k.st_global(out, Value::u32(1), fu);
    k.st_global(fout, tid, half_back);
    k.st_global(hout, tid, half);
    k.if_then(fne, |k| {
        k.st_shared(smem, tid, fz);
    });
    let sv = k.ld_shared(smem, Value::u32(3));
    let _ = k.ld_shared(hsm, tid);
    k.st_global(fout, Value::u32(0), sv);
    let _ = k.atomic_add_global(out, Value::u32(2), Value::u32(1));
    let dst = k.shared_elem_addr(smem, Value::u32(4));
    let src = k.global_elem_addr(fout, Value::u32(8));
    k.cp_async(dst, src, 16);
    k.cp_async(dst, src, 4);
    k.cp_async_commit_group();
    k.cp_async_wait_group(0);
    let cbars = k.alloc_barriers("cp_bars", 1);
    let cbar = k.barrier_at(cbars, Value::u32(0));
    k.cp_async_mbarrier_arrive(cbar, false);
    k.cp_async_mbarrier_arrive(cbar, true);

    // Control flow.
    let acc = k.var(Value::u32(0));
    k.for_range(Value::u32(0), n, |k, it| {
        let odd = k.and(it, Value::u32(1));
        let is_odd = k.ne(odd, Value::u32(0));
        k.if_else(
            is_odd,
            |k| k.continue_(),
            |k| {
                let t = k.add(Value::Reg(acc), it);
                k.assign(acc, t);
            },
        );
        let big_enough = k.gt(Value::Reg(acc), Value::u32(1000));
        k.if_then(big_enough, |k| k.break_());
    });
    k.while_(
        |k| k.lt(Value::Reg(acc), Value::u32(10)),
        |k| {
            let t = k.add(Value::Reg(acc), Value::u32(3));
            k.assign(acc, t);
        },
    );
    k.loop_(|k| k.break_());

    // The mbarrier family.
    let bar0 = k.barrier_at(bars, Value::u32(0));
    let stage = k.rem(tid, Value::u32(4));
    let bar_dyn = k.barrier_at(bars, stage);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.mbarrier_init(bar0, Value::u32(1));
        k.mbarrier_init(bar_dyn, n);
    });
    if hopper {
        k.fence_mbarrier_init();
    }
    k.cta_sync();
    let st = k.mbarrier_arrive(bar0);
    let _ = k.mbarrier_arrive_drop(bar0, ArriveOpts::default());
    let pc = k.mbarrier_pending_count(st);
    k.st_global(out, Value::u32(3), pc);
    let t1 = k.mbarrier_test_wait(bar0, Value::u32(0));
    let t2 = k.mbarrier_test_wait_state(bar0, st);
    let t = k.and(t1, t2);
    let tv = k.cvt(t, Type::U32);
    k.st_global(out, Value::u32(4), tv);
    if hopper {
        let _ = k.mbarrier_arrive_with(bar0, ArriveOpts { count: Some(Value::u32(2)), sem: None, scope: None });
        let _ = k.mbarrier_arrive_with(
            bar0,
            ArriveOpts { count: None, sem: Some(Sem::Release), scope: Some(Scope::Cluster) },
        );
        let _ = k.mbarrier_arrive_expect_tx(bar_dyn, Value::u32(1024));
        k.mbarrier_expect_tx(bar_dyn, Value::u32(64));
        k.mbarrier_complete_tx(bar_dyn, Value::u32(64));
        let once = k.mbarrier_try_wait_once(bar0, Value::u32(1), Some(Value::u32(1000)));
        let _ = k.mbarrier_try_wait_once(bar0, once, None);
        k.mbarrier_wait(bar0, Value::u32(0));
        k.mbarrier_wait_with(bar0, Value::u32(1), Ordering { sem: Some(Sem::Acquire), scope: Some(Scope::Cluster) });
        k.mbarrier_wait_state(bar0, st);
        let remote = k.map_barrier_to_cta(bar0, Value::u32(0));
        k.mbarrier_arrive_remote(remote, None);
        k.mbarrier_arrive_remote(remote, Some(Value::u32(2)));
        let elected = k.elect_sync();
        k.if_then(elected, |k| {
            k.fence_proxy_async(ProxySpace::SharedCta);
            k.fence_proxy_async(ProxySpace::All);
        });
        k.fence(MemScope::Cluster);
        let rank = k.cluster_cta_rank();
        let _ = k.cluster_size();
        k.st_global(out, Value::u32(5), rank);
        k.cluster_arrive();
        k.cluster_wait();
        k.cluster_arrive_relaxed();
        k.cluster_wait();

        // TMA.
        let tm = tmap.expect("hopper zoo has a tensor map");
        let tile = k.shared_base_addr(smem);
        k.tma_load(tile, tm, &[Value::u32(0), tid], bar0);
        k.tma_load_multicast(tile, tm, &[Value::u32(0), tid], bar0, Value::imm_u(3, Type::U16));
        let policy = k.var(Value::u64(0));
        k.tma_load_hinted(tile, tm, &[Value::u32(0), tid], bar0, Value::Reg(policy));
        k.tma_prefetch(tm, &[Value::u32(0), Value::u32(0)]);
        k.tma_store(tm, &[Value::u32(0), tid], tile);
        let gsrc = k.global_elem_addr(fout, Value::u32(0));
        k.bulk_load(tile, gsrc, Value::u32(256), bar0);
        k.bulk_store(gsrc, tile, Value::u32(256));
        k.bulk_commit_group();
        k.bulk_wait_group(0, true);
        k.bulk_wait_group(1, false);
    }
    if matches!(target, Target::Sm90a | Target::Sm100a) {
        let wg = k.warpgroup_idx();
        let producer = k.eq(wg, Value::u32(0));
        k.if_else(producer, |k| k.setmaxnreg(false, 40), |k| k.setmaxnreg(true, 232));
    }
    if target == Target::Sm100a {
        k.push(Tcgen05Op::Fence { after: false });
        k.tcgen05_commit(bar0);
        k.push(Tcgen05Op::Fence { after: true });
    }
    k.bar_sync(Value::u32(1), Some(Value::u32(64)));
    k.bar_arrive(Value::u32(2), Value::u32(64));
    k.fence(MemScope::Cta);
    k.fence(MemScope::Gpu);
    let late = k.gt(tid, Value::u32(1000));
    k.if_then(late, |k| k.trap());
    k.mbarrier_inval(bar0);
    k.probe("zoo_end", &[tid]);
    k.ret();
    k.finish()
}
