//! The instruction interface (`Inst::for_each_use/def`, `mnemonic`, `effects`, `barrier`)
//! against the printer: for every op the registry can build (each variant, on the targets
//! that have it) and every op form of the zoo, the registers the printed PTX of one
//! instruction names are exactly its uses and defs, and its PTX contains its mnemonic.

use phaser_codegen::arch::PtxVersion;
use phaser_codegen::emit::inst::{lines, InstCtx};
use phaser_codegen::emit::operand::reg;
use phaser_codegen::emit::WaitLoop;
use phaser_codegen::ir::*;
use phaser_codegen::registry::{self, variant_kernel, variants};
use phaser_codegen::zoo::op_zoo;
use phaser_codegen::Target;
use std::collections::{BTreeMap, BTreeSet};

/// Every kernel to look at: each registry variant on Hopper and Blackwell, and the zoos.
fn kernels() -> Vec<Kernel> {
    let mut out = Vec::new();
    for op in registry::ops() {
        for v in variants(op) {
            for target in [Target::Sm90a, Target::Sm100a] {
                out.push(variant_kernel(op, &v, target).unwrap_or_else(|e| panic!("{} on {target}: {e}", op.path)));
            }
        }
    }
    for target in Target::ALL {
        out.push(op_zoo(target).unwrap_or_else(|e| panic!("zoo on {target}: {e}")));
    }
    out
}

/// The PTX lines of one instruction of `k`, blocking waits with their watchdog.
fn printed(k: &Kernel, inst: &Inst) -> Vec<String> {
    let (mut labels, mut printfs, mut wait_sites) = (0, 0, 0);
    let mut cx = InstCtx {
        kernel: k,
        labels: &mut labels,
        wait_timeout_ns: Some(1_000_000),
        wait_suspend_hint_ns: Some(1000),
        wait_loop: WaitLoop::default(),
        version: PtxVersion::new(8, 6),
        printfs: &mut printfs,
        wait_sites: &mut wait_sites,
        watchdog_record: true,
    };
    lines(inst, &mut cx)
}

/// The virtual registers a line names (`%r12`, `%rd3`, `%p1`, ...), not scratch registers
/// of a printed block (`%wait_done`) or special registers (`%tid.x`).
fn virtual_regs(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let name = &line[start + 1..i];
        let digits = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let prefix = &name[..name.len() - digits.len()];
        if ["p", "rs", "r", "rd", "f", "fd"].contains(&prefix)
            && !digits.is_empty()
            && digits.bytes().all(|c| c.is_ascii_digit())
        {
            out.push(line[start..i].to_string());
        }
    }
    out
}

#[test]
fn the_printed_registers_are_the_uses_and_defs() {
    let mut seen = BTreeSet::new();
    for k in kernels() {
        walk_insts(k.body(), &mut |inst, _| {
            seen.insert(inst.variant_name());
            let text = printed(&k, inst);
            let in_ptx: BTreeSet<String> = text.iter().flat_map(|l| virtual_regs(l)).collect();
            let mut said = BTreeSet::new();
            inst.for_each_use(|v| {
                if let Value::Reg(r) = v {
                    said.insert(reg(*r));
                }
            });
            inst.for_each_def(|r| {
                said.insert(reg(r));
            });
            assert_eq!(in_ptx, said, "{}: {inst:?}\n{}", k.name(), text.join("\n"));
        });
    }
    // The families the interface must answer for were all exercised.
    for family in ["Arith", "Memory", "Mbarrier", "Sync", "Tma", "Tcgen05", "Wgmma", "Fragment", "Warp"] {
        assert!(seen.iter().any(|v| v.starts_with(&format!("{family}::"))), "no {family} op: {seen:?}");
    }
    for v in ["ReadSpecial", "Printf", "Asm", "Probe", "FlagSpin::Start", "FlagSpin::Try"] {
        assert!(seen.contains(v), "no {v}: {seen:?}");
    }
}

/// The instruction word of a PTX line: after labels, braces and a `@p` guard.
fn instruction_word(line: &str) -> Option<&str> {
    let l = line.trim().trim_start_matches('{').trim();
    let l = if l.starts_with('@') { l.split_once(' ').map_or("", |(_, rest)| rest) } else { l };
    let word = l.split([' ', ';']).next().filter(|w| !w.is_empty())?;
    (!word.starts_with('.') && !word.starts_with("//") && !word.ends_with(':')).then_some(word)
}

#[test]
fn the_printed_ptx_holds_the_mnemonic() {
    for k in kernels() {
        walk_insts(k.body(), &mut |inst, _| {
            let text = printed(&k, inst);
            let m = inst.mnemonic();
            let found = match inst {
                // Inline PTX is the user's text; a probe prints a comment naming itself.
                Inst::Asm(_) => text.first().is_some_and(|l| l.contains("inline PTX")),
                Inst::Probe { .. } => text.iter().any(|l| l.starts_with("// probe ")),
                _ => text.iter().filter_map(|l| instruction_word(l)).any(|w| {
                    w == m || w.strip_prefix(m).is_some_and(|rest| rest.starts_with('.') || rest.starts_with("::"))
                }),
            };
            assert!(found, "{}: `{m}` is not the instruction of\n{}", inst.variant_name(), text.join("\n"));
        });
    }
}

#[test]
fn the_barrier_operand_is_the_one_the_effects_name() {
    let mut with_barrier = BTreeMap::new();
    for k in kernels() {
        walk_insts(k.body(), &mut |inst, _| {
            let e = inst.effects();
            assert_eq!(inst.barrier().copied(), e.barrier(), "{inst:?}");
            if let Some(b) = inst.barrier() {
                // The barrier is one of the values the instruction reads.
                let mut uses = Vec::new();
                inst.for_each_use(|v| uses.push(*v));
                assert!(uses.contains(b), "{inst:?}");
                *with_barrier.entry(inst.variant_name()).or_insert(0) += 1;
            }
            let mut copy = inst.clone();
            if let Some(b) = copy.barrier_mut() {
                *b = Value::u32(0xdead0);
                assert_eq!(copy.barrier(), Some(&Value::u32(0xdead0)));
            }
        });
    }
    for v in ["Mbarrier::Init", "Mbarrier::Wait", "Tma::LoadTensor", "Memory::CpAsyncMbarrierArrive", "Tcgen05::Commit"]
    {
        assert!(with_barrier.contains_key(v), "{v} has no barrier: {with_barrier:?}");
    }
}

#[test]
fn defs_and_effects_of_the_families_a_pass_must_not_miss() {
    let r = |id, ty| Reg { id, ty };
    // Inline PTX: inputs are uses, outputs defs; the `"memory"` clobber reads and writes memory.
    let asm = Inst::Asm(InlineAsm {
        template: "add.u32 {1}, {0}, 1;".into(),
        inputs: vec![Value::Reg(r(1, Type::U32))],
        outputs: vec![r(2, Type::U32)],
        memory: true,
    });
    assert_eq!(asm.regs_used(), [r(1, Type::U32)]);
    assert_eq!(asm.regs_defined(), [r(2, Type::U32)]);
    let e = asm.effects();
    assert!(e.writes.contains(MemSpace::Global) && e.reads.contains(MemSpace::Shared) && !e.is_pure());
    // tcgen05.ld writes its destinations (asynchronously: a launch waited for by tcgen05.wait).
    let ld = Inst::Tcgen05(Tcgen05Op::Ld {
        shape: LdStShape::S32x32b,
        num: 2,
        pack16: false,
        dst: vec![r(3, Type::B32), r(4, Type::B32)],
        taddr: Value::Reg(r(5, Type::U32)),
    });
    assert_eq!(ld.regs_defined(), [r(3, Type::B32), r(4, Type::B32)]);
    assert_eq!(ld.regs_used(), [r(5, Type::U32)]);
    assert_eq!(ld.effects().launch, Some(AsyncLaunch { unit: AsyncUnit::Tcgen05, completion: Completion::Wait }));
    assert!(ld.effects().reads.contains(MemSpace::Tensor));
    // A wgmma's accumulator is read and written.
    let mma = Inst::Wgmma(WgmmaOp::MmaAsync(Box::new(MmaAsync {
        n: 8,
        a_ty: MmaElem::BF16,
        b_ty: MmaElem::BF16,
        d: vec![r(6, Type::F32)],
        a: WgmmaA::Desc(Value::Reg(r(7, Type::U64))),
        b_desc: Value::Reg(r(8, Type::U64)),
        scale_d: Value::pred(true),
        negate_a: false,
        negate_b: false,
        trans_a: false,
        trans_b: false,
    })));
    assert_eq!(mma.regs_defined(), [r(6, Type::F32)]);
    assert_eq!(mma.regs_used(), [r(6, Type::F32), r(7, Type::U64), r(8, Type::U64)]);
    assert_eq!(mma.effects().launch.map(|l| l.unit), Some(AsyncUnit::Wgmma));
    // Waits observe, arrivals signal, fences only order.
    let bar = Value::Reg(r(9, Type::U32));
    let wait = Inst::Mbarrier(MbarrierOp::Wait { bar, on: WaitOn::Parity(Value::u32(0)), order: Ordering::default() });
    let arrive = Inst::Mbarrier(MbarrierOp::Arrive {
        bar,
        count: None,
        order: Ordering::default(),
        space: BarSpace::Cta,
        state: None,
        drop: false,
    });
    let fence = Inst::Sync(SyncOp::FenceProxyAsync { space: ProxySpace::SharedCta });
    assert_eq!(wait.effects().sync, Some(SyncEffect::Mbarrier { bar, action: BarrierAction::Wait { blocking: true } }));
    assert!(!wait.effects().sync.unwrap().signals() && arrive.effects().sync.unwrap().signals());
    assert_eq!(fence.effects().sync, Some(SyncEffect::Fence(Fence::ProxyAsync(ProxySpace::SharedCta))));
    assert!(!fence.effects().sync.unwrap().signals());
    // A TMA load completes on its barrier; arithmetic is pure.
    let load = Inst::Tma(TmaOp::LoadBulk { dst: Value::u32(0), src: Value::u64(0), bytes: Value::u32(16), bar });
    assert_eq!(load.effects().barrier(), Some(bar));
    assert!(load.effects().writes.contains(MemSpace::Shared) && load.effects().reads.contains(MemSpace::Global));
    let add = Inst::Arith(ArithOp::Binary { op: BinOp::Add, dst: r(10, Type::U32), a: bar, b: Value::u32(1) });
    assert!(add.effects().is_pure());
    assert_eq!((add.mnemonic(), add.variant_name()), ("add", "Arith::Binary"));
}
