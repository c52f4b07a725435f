//! The ISA table and target checks: versions are picked from what a kernel uses, and ops a
//! target lacks are clear errors that name the op, the target and the source line.

use phaser_codegen::builder::{ArriveOpts, KernelBuilder};
use phaser_codegen::ir::{AtomSem, Dim, MemOrder, MemScope, Sem, Type, Value};
use phaser_codegen::{emit_kernel, emit_module, EmitOptions, Module, PtxVersion, Target};

fn version_line(ptx: &str) -> &str {
    ptx.lines().find(|l| l.starts_with(".version")).unwrap()
}

fn barrier_kernel(
    target: Target,
    f: impl FnOnce(&mut KernelBuilder, phaser_codegen::builder::Barrier),
) -> phaser_codegen::Result<phaser_codegen::Kernel> {
    let mut k = KernelBuilder::new("k", target);
    let bars = k.alloc_barriers("bars", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    f(&mut k, b);
    k.finish()
}

#[test]
fn version_follows_the_ops_used() {
    let plain = barrier_kernel(Target::Sm80, |k, b| k.mbarrier_init(b, Value::u32(1))).unwrap();
    assert_eq!(version_line(&emit_kernel(&plain).unwrap()), ".version 7.0");
    let parity = barrier_kernel(Target::Sm80, |k, b| {
        k.mbarrier_test_wait(b, Value::u32(0));
    })
    .unwrap();
    assert_eq!(version_line(&emit_kernel(&parity).unwrap()), ".version 7.1");
    let hopper = barrier_kernel(Target::Sm90, |k, b| k.mbarrier_wait(b, Value::u32(0))).unwrap();
    assert_eq!(version_line(&emit_kernel(&hopper).unwrap()), ".version 7.8");
    let tx = barrier_kernel(Target::Sm90, |k, b| {
        k.mbarrier_arrive_expect_tx(b, Value::u32(128));
    })
    .unwrap();
    assert_eq!(version_line(&emit_kernel(&tx).unwrap()), ".version 8.0");
    let relaxed = barrier_kernel(Target::Sm90a, |k, b| {
        k.mbarrier_arrive_with(b, ArriveOpts { sem: Some(Sem::Relaxed), ..Default::default() });
    })
    .unwrap();
    assert_eq!(version_line(&emit_kernel(&relaxed).unwrap()), ".version 8.6");
}

#[test]
fn hopper_op_in_ampere_kernel_is_a_clear_error() {
    let e = barrier_kernel(Target::Sm80, |k, b| k.mbarrier_wait(b, Value::u32(0))).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("`mbarrier.try_wait` needs sm_90 or newer, but the kernel targets sm_80"), "{msg}");
    assert!(msg.contains("codegen/tests/isa.rs:"), "error must name the Rust source line: {msg}");
}

#[test]
fn arch_specific_ops_need_their_target() {
    let e = barrier_kernel(Target::Sm90a, |k, b| k.tcgen05_commit(b)).unwrap_err();
    assert!(e.to_string().contains("`tcgen05.commit` needs sm_100a, but the kernel targets sm_90a"), "{e}");
    let e = barrier_kernel(Target::Sm90, |k, _| k.setmaxnreg(true, 232)).unwrap_err();
    assert!(e.to_string().contains("`setmaxnreg` needs sm_90a or sm_100a"), "{e}");
    let capped = |k: &mut KernelBuilder, _| {
        k.max_registers(168);
        k.setmaxnreg(true, 232)
    };
    assert!(barrier_kernel(Target::Sm90a, capped).is_ok());
}

/// ptxas ignores `setmaxnreg` when it cannot tell the register count at entry (C7508): the
/// builder refuses that at the instruction's line, as the DSL does at its span, and accepts
/// a cap or a block shape (which gets `.minnctapersm 1`).
#[test]
fn setmaxnreg_needs_a_register_count_at_entry() {
    let e = barrier_kernel(Target::Sm90a, |k, _| k.setmaxnreg(true, 232)).unwrap_err();
    let d = e.diagnostics.iter().find(|d| d.message.contains("without a register cap")).expect("refused");
    assert!(d.message.contains("C7508"), "{e}");
    let loc = d.loc.expect("the setmaxnreg line");
    assert!(loc.file.ends_with("codegen/tests/isa.rs"), "{loc:?}");
    let shaped = barrier_kernel(Target::Sm90a, |k, _| {
        k.require_block(384, 1, 1);
        k.setmaxnreg(false, 40)
    })
    .unwrap();
    assert_eq!(shaped.bounds().minnctapersm, Some(1));
    // The same rule for a kernel edited by hand: dropping the `.minnctapersm` is refused.
    let mut parts = shaped.into_parts();
    parts.bounds.minnctapersm = None;
    let e = parts.finish().unwrap_err();
    assert!(e.to_string().contains("without a register cap"), "{e}");
}

#[test]
fn ptx_version_cap_is_enforced() {
    let k = barrier_kernel(Target::Sm100a, |k, b| k.mbarrier_init(b, Value::u32(1))).unwrap();
    let opts = EmitOptions { max_ptx: PtxVersion::new(8, 0), ..EmitOptions::default() };
    let e = emit_module(&Module::new(vec![k]), &opts).unwrap_err();
    assert!(e.to_string().contains("needs PTX ISA 8.6, newer than the 8.0"), "{e}");
}

#[test]
fn modules_reject_mixed_targets_and_duplicate_names() {
    let a = barrier_kernel(Target::Sm90a, |k, b| k.mbarrier_init(b, Value::u32(1))).unwrap();
    let b = barrier_kernel(Target::Sm80, |k, b| k.mbarrier_init(b, Value::u32(1))).unwrap();
    let e = emit_module(&Module::new(vec![a.clone(), b]), &EmitOptions::default()).unwrap_err();
    assert!(e.to_string().contains("put them in separate modules"), "{e}");
    let e = emit_module(&Module::new(vec![a.clone(), a]), &EmitOptions::default()).unwrap_err();
    assert!(e.to_string().contains("share a name"), "{e}");
}

#[test]
fn value_checks_reject_bad_counts_and_bytes() {
    for (count, ok) in [(0u32, false), (1, true), ((1 << 20) - 1, true), (1 << 20, false)] {
        let r = barrier_kernel(Target::Sm90a, |k, b| k.mbarrier_init(b, Value::u32(count)));
        assert_eq!(r.is_ok(), ok, "count {count}: {r:?}");
        if !ok {
            assert!(r.unwrap_err().to_string().contains("mbarrier arrival count"));
        }
    }
    let e = barrier_kernel(Target::Sm90a, |k, b| {
        k.mbarrier_arrive_expect_tx(b, Value::u32(1 << 20));
    })
    .unwrap_err();
    assert!(e.to_string().contains("expect_tx byte count 1048576 is out of range"), "{e}");
    let e = barrier_kernel(Target::Sm90a, |k, b| k.mbarrier_wait(b, Value::u32(2))).unwrap_err();
    assert!(e.to_string().contains("phase parity 2 is out of range"), "{e}");
}

#[test]
fn builder_errors_are_all_reported_with_locations() {
    let mut k = KernelBuilder::new("bad", Target::Sm90a);
    let _ = k.alloc_barriers("none", 0);
    let bars = k.alloc_barriers("bars", 2);
    let _ = k.barrier_at(bars, Value::u32(2));
    let x = k.param("x", Type::F32);
    let t = k.thread_idx(Dim::X);
    let _ = k.add(x, t);
    k.break_();
    let ro = k.param_global("ro", Type::U32, false);
    k.st_global(ro, Value::u32(0), Value::u32(1));
    let e = k.finish().unwrap_err();
    let msgs: Vec<&str> = e.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs.len(), 5, "{msgs:#?}");
    assert!(msgs[0].contains("needs at least one barrier"));
    assert!(msgs[1].contains("barrier index 2 is out of bounds"));
    assert!(msgs[2].contains("mismatched types in +: f32 and u32"));
    assert!(msgs[3].contains("`break` outside of a loop"));
    assert!(msgs[4].contains("read-only buffer"));
    assert!(e.diagnostics.iter().all(|d| d.loc.unwrap().file.ends_with("isa.rs")));
}

/// A flag signalled and waited for prints a release store and an acquire load in a loop, at
/// PTX 6.0 / sm_70's forms (`.cluster` needs PTX 7.8).
#[test]
fn flags_print_release_stores_and_acquire_loads() {
    let mut k = KernelBuilder::new("flags", Target::Sm90a);
    let flags = k.param_global("flags", Type::U32, true);
    k.flag_signal(flags, Value::u32(1), Value::u32(2), MemScope::Sys);
    k.flag_wait(flags, Value::u32(0), Value::u32(3), MemScope::Gpu);
    let v = k.ld_global_ordered(flags, Value::u32(2), MemOrder { sem: AtomSem::Relaxed, scope: MemScope::Cluster });
    k.st_global_ordered(flags, Value::u32(3), v, MemOrder { sem: AtomSem::Relaxed, scope: MemScope::Cta });
    let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
    use phaser_codegen::ptx_text::count;
    assert_eq!(count(&ptx, "st.release.sys.global.u32 [%rd*+4], 2"), 1, "{ptx}");
    assert_eq!(count(&ptx, "ld.acquire.gpu.global.u32 _, [%rd*]"), 1, "{ptx}");
    assert_eq!(count(&ptx, "ld.relaxed.cluster.global.u32 _, [%rd*+8]"), 1, "{ptx}");
    assert_eq!(count(&ptx, "st.relaxed.cta.global.u32 [%rd*+12], _"), 1, "{ptx}");
}

/// Misused strong accesses and flags are build errors at the Rust line that made them.
#[test]
fn strong_access_and_flag_misuse_are_errors_at_their_lines() {
    let mut k = KernelBuilder::new("bad", Target::Sm90a);
    let flags = k.param_global("flags", Type::U32, true);
    let floats = k.param_global("floats", Type::F32, true);
    let (gpu, sys) = (MemScope::Gpu, MemScope::Sys);
    let line = line!() + 1;
    let _ = k.ld_global_ordered(flags, Value::u32(0), MemOrder { sem: AtomSem::Release, scope: gpu });
    k.st_global_ordered(flags, Value::u32(0), Value::u32(1), MemOrder { sem: AtomSem::Acquire, scope: sys });
    k.flag_wait(floats, Value::u32(0), Value::u32(1), gpu);
    k.flag_signal(floats, Value::u32(0), Value::f32(1.0), gpu);
    let e = k.finish().unwrap_err();
    let got: Vec<(u32, &str)> = e.diagnostics.iter().map(|d| (d.loc.unwrap().line, d.message.as_str())).collect();
    assert_eq!(
        got,
        [
            (line, "a load has `.relaxed` or `.acquire` semantics, not `.release`"),
            (line + 1, "a store has `.relaxed` or `.release` semantics, not `.acquire`"),
            (line + 2, "`flag.wait` takes a flag buffer of u32, found f32"),
            (line + 3, "`flag.signal` takes a flag buffer of u32, found f32"),
        ]
    );
}

#[test]
fn shared_cta_is_spelled_for_the_version() {
    let old = barrier_kernel(Target::Sm80, |k, b| k.mbarrier_init(b, Value::u32(1))).unwrap();
    assert!(emit_kernel(&old).unwrap().contains("mbarrier.init.shared.b64"));
    let new = barrier_kernel(Target::Sm90, |k, b| k.mbarrier_wait(b, Value::u32(0))).unwrap();
    assert!(emit_kernel(&new).unwrap().contains("mbarrier.try_wait.parity.shared::cta.b64"));
}

#[test]
fn blocking_wait_has_a_watchdog_unless_disabled() {
    let k = barrier_kernel(Target::Sm90a, |k, b| k.mbarrier_wait(b, Value::u32(0))).unwrap();
    let with = emit_kernel(&k).unwrap();
    assert!(with.contains("%globaltimer") && with.contains("trap;"));
    let opts = EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() };
    let without = emit_module(&Module::new(vec![k]), &opts).unwrap();
    assert!(!without.contains("%globaltimer") && !without.contains("trap;"));
}

/// A named barrier's id is in 0..=15 and its thread count a multiple of 32 within the
/// declared block (`arch::limits::named_barrier_count_problem`, which the simulator applies
/// to run-time counts with the launched block): refused at the Rust line.
#[test]
fn named_barrier_ids_and_counts_are_checked_against_the_block() {
    let refused = |threads: u32, f: &dyn Fn(&mut KernelBuilder)| {
        let mut k = KernelBuilder::new("k", Target::Sm90a);
        k.require_block(threads, 1, 1);
        f(&mut k);
        let e = k.finish().unwrap_err();
        let d = &e.diagnostics[0];
        assert!(d.loc.is_some_and(|l| l.file.ends_with("isa.rs")), "{e}");
        d.message.clone()
    };
    let m = refused(128, &|k| k.bar_sync(Value::u32(1), Some(Value::u32(256))));
    assert_eq!(m, "named barrier thread count 256 exceeds the block's 128 threads: the barrier would never complete");
    let m = refused(128, &|k| k.bar_arrive(Value::u32(1), Value::u32(48)));
    assert_eq!(m, "named barrier thread count 48 must be a multiple of 32 in 32..=1024");
    let m = refused(128, &|k| k.bar_sync(Value::u32(16), None));
    assert_eq!(m, "named barrier id 16 is out of range: must be in 0..=15");
    // Within the block, and any count where the block is not declared, is accepted.
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.require_block(256, 1, 1);
    k.bar_sync(Value::u32(15), Some(Value::u32(256)));
    k.finish().unwrap();
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.bar_arrive(Value::u32(1), Value::u32(1024));
    k.finish().unwrap();
}
