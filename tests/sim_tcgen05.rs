//! The simulator's tcgen05 semantics on small builder kernels: one CTA fills an A and a B tile
//! in shared memory, allocates tensor memory, one thread issues `tcgen05.mma`s and commits
//! them to a barrier, every warp waits, loads its 32 lanes of the accumulator and stores them.
//! The correct kernel computes `A * B` exactly (small integers) with no finding; each injected
//! mistake is reported with its category at its Rust line (marked `// BUG:` below).

use phaser::codegen::builder::{KernelBuilder, TmemAlloc, UmmaDesc};
use phaser::codegen::ir::{
    CtaGroup, Dim, InstrDesc, LdStShape, Major, MmaOperand, ProxySpace, SmemTile, Swizzle, Type, UmmaElem, Value,
};
use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, Kernel, LaunchConfig, Target};

const FILE: &str = "tests/sim_tcgen05.rs";
const M: u32 = 128;
const N: u32 = 64;
const K: u32 = 64;

/// The line of this file holding `marker` (a marker on a line of its own names the statement
/// below it).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_tcgen05.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of") && !l.contains('"')).unwrap();
    (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
}

/// One mistake to inject (all off: the correct kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Bugs {
    no_commit_wait: bool,
    no_after_fence: bool,
    no_before_fence: bool,
    no_dealloc: bool,
    dealloc_by_other_warp: bool,
    wrong_lanes: bool,
    outside_allocation: bool,
    double_alloc: bool,
    no_proxy_fence: bool,
    no_wait_ld: bool,
}

/// `d (M x N, f32) = a (M x K, bf16, row-major) * b (N x K, bf16, row-major)^T`.
fn mma_kernel(bugs: Bugs) -> Kernel {
    let mut k = KernelBuilder::new("tcgen05_mma_once", Target::Sm100a);
    let a = k.param_global("a", Type::BF16, false);
    let b = k.param_global("b", Type::BF16, false);
    let d = k.param_global("d", Type::F32, true);
    k.require_block(128, 1, 1);
    let g = CtaGroup::One;
    let a_tile = SmemTile::new(2, M, K, Swizzle::B128);
    let b_tile = SmemTile::new(2, N, K, Swizzle::B128);
    let smem = k.dynamic_shared(Type::BF16, 0);
    let slot = k.alloc_shared("tmem_slot", Type::U32, 4);
    let bars = k.alloc_barriers("mma_done", 1);
    let tid = k.thread_idx(Dim::X);
    let warp = k.warp_idx();
    let lane = k.lane_idx();
    let base = k.shared_base_addr(smem);
    let b_base = k.add(base, Value::u32(a_tile.bytes()));
    // Every thread stores its share of A and B into the swizzled tiles.
    for (tile, src, rows, at) in [(a_tile, a, M, base), (b_tile, b, N, b_base)] {
        k.for_range_step(tid, Value::u32(rows * K), 128, |k, i| {
            let row = k.div(i, Value::u32(K));
            let col = k.rem(i, Value::u32(K));
            let v = k.ld_global(src, i);
            let addr = k.smem_tile_addr(&tile, at, row, col);
            k.st_raw(phaser::codegen::ir::Space::Shared, addr, 0, v);
        });
    }
    if !bugs.no_proxy_fence {
        k.fence_proxy_async(ProxySpace::SharedCta);
    }
    let bar = k.barrier_at(bars, Value::u32(0));
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.fence_mbarrier_init();
    });
    let alloc = TmemAlloc::new(&mut k, g, N);
    let slot_addr = k.shared_base_addr(slot);
    let w0 = k.eq(warp, Value::u32(0));
    k.if_then(w0, |k| {
        if bugs.double_alloc {
            k.tcgen05_alloc(g, slot_addr, Value::u32(N));
            k.tcgen05_alloc(g, slot_addr, Value::u32(N)); // BUG: double-alloc
            k.tcgen05_relinquish_alloc_permit(g);
        } else {
            alloc.allocate(k, slot_addr);
        }
    });
    k.cta_sync();
    let tmem = k.ld_shared(slot, Value::u32(0));
    k.if_then(w0, |k| {
        k.elect_one(|k| {
            let ad: UmmaDesc = k.umma_desc(UmmaElem::BF16, MmaOperand::new(a_tile, Major::K), base);
            let bd = k.umma_desc(UmmaElem::BF16, MmaOperand::new(b_tile, Major::K), b_base);
            let id = k.instr_desc(InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, M, N), g);
            for step in 0..K / 16 {
                // MMA
                k.tcgen05_mma(&id, tmem, &ad, 0, &bd, 0, 16 * step, Value::pred(step > 0));
            }
            k.tcgen05_commit(bar);
        });
    });
    if !bugs.no_commit_wait {
        k.mbarrier_wait(bar, Value::u32(0));
    }
    if !bugs.no_after_fence {
        k.tcgen05_fence_after_thread_sync();
    }
    // Warp w reads lanes 32w..32w+31 (row = lane), all N columns.
    let quarter = if bugs.wrong_lanes { k.xor(warp, Value::u32(1)) } else { warp };
    let lane_off = k.mul(quarter, Value::u32(32 << 16));
    let mut taddr = k.add(tmem, lane_off);
    if bugs.outside_allocation {
        taddr = k.add(taddr, Value::u32(N));
    }
    let vals = k.tcgen05_ld(LdStShape::S32x32b, N, taddr, Type::F32); // LD
    if !bugs.no_wait_ld {
        k.tcgen05_wait_ld();
    }
    let row = k.mad(warp, Value::u32(32), lane);
    for (j, v) in vals.iter().enumerate() {
        let at = k.mad(row, Value::u32(N), Value::u32(j as u32));
        k.st_global(d, at, *v);
    }
    if !bugs.no_before_fence {
        k.tcgen05_fence_before_thread_sync();
    }
    k.cta_sync();
    if !bugs.no_dealloc {
        let owner = if bugs.dealloc_by_other_warp { Value::u32(1) } else { Value::u32(0) };
        let is_owner = k.eq(warp, owner);
        k.if_then(is_owner, |k| alloc.free(k, tmem)); // DEALLOC
    }
    k.finish().unwrap()
}

/// Small integers (exact in bf16 and in any f32 summation order).
fn inputs() -> (Vec<half::bf16>, Vec<half::bf16>) {
    let a = (0..M * K).map(|i| half::bf16::from_f32(((i * 7 + 3) % 5) as f32 - 2.0)).collect();
    let b = (0..N * K).map(|i| half::bf16::from_f32(((i * 3 + 1) % 7) as f32 - 3.0)).collect();
    (a, b)
}

fn run(bugs: Bugs, strategy: Strategy) -> (SimReport, Vec<f32>) {
    let k = mma_kernel(bugs);
    let dev = Device::sim(SimConfig::default().with_strategy(strategy).with_seed(11));
    let (a, b) = inputs();
    let (ga, gb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let gd = dev.upload(&vec![f32::NAN; (M * N) as usize]).unwrap();
    let smem = SmemTile::new(2, M, K, Swizzle::B128).bytes() + SmemTile::new(2, N, K, Swizzle::B128).bytes();
    let cfg = LaunchConfig::linear(1, 128).with_dynamic_shared(smem);
    let rep = dev.simulate(&k, cfg, &[Arg::buffer(&ga), Arg::buffer(&gb), Arg::buffer(&gd)]).unwrap();
    (rep, dev.download(&gd).unwrap())
}

fn reference() -> Vec<f32> {
    let (a, b) = inputs();
    let mut d = vec![0f32; (M * N) as usize];
    for i in 0..M as usize {
        for j in 0..N as usize {
            d[i * N as usize + j] =
                (0..K as usize).map(|kk| a[i * K as usize + kk].to_f32() * b[j * K as usize + kk].to_f32()).sum();
        }
    }
    d
}

fn finding<'a>(rep: &'a SimReport, c: Category, marker: &str) -> &'a Finding {
    let f = rep.findings.iter().find(|f| f.category == c).unwrap_or_else(|| panic!("no {c} finding:\n{}", rep.text()));
    let loc = f.loc.unwrap_or_else(|| panic!("{c} without a location:\n{}", rep.text()));
    assert_eq!((loc.file, loc.line), (FILE, line_of(marker)), "{c} at the wrong line:\n{}", rep.text());
    f
}

#[test]
fn mma_commit_wait_fence_ld_computes_the_product_with_no_finding() {
    let want = reference();
    for s in [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial] {
        let (rep, d) = run(Bugs::default(), s);
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        assert_eq!(d, want, "{s:?}");
    }
}

#[test]
fn reading_the_accumulator_before_the_commit_phase_is_a_tmem_race() {
    let (rep, _) = run(Bugs { no_commit_wait: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::TmemRace, "// LD");
    assert!(f.message.contains("tcgen05.mma"), "{f}");
}

#[test]
fn a_missing_after_thread_sync_fence_is_named() {
    let (rep, _) = run(Bugs { no_after_fence: true, ..Bugs::default() }, Strategy::Random);
    let f = finding(&rep, Category::Tcgen05Fence, "// LD");
    assert!(f.message.contains("tcgen05.fence::after_thread_sync") && f.message.contains("mma_done"), "{f}");
}

#[test]
fn a_missing_before_thread_sync_fence_is_named_at_the_dealloc() {
    let (rep, _) = run(Bugs { no_before_fence: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::Tcgen05Fence, "// DEALLOC");
    assert!(f.message.contains("before_thread_sync") && f.message.contains("tcgen05.ld"), "{f}");
}

#[test]
fn allocation_misuse_is_reported() {
    let (rep, _) = run(Bugs { no_dealloc: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = rep.findings.iter().find(|f| f.category == Category::TmemLeak).unwrap_or_else(|| panic!("{}", rep.text()));
    assert!(f.message.contains("columns 0-63") && f.loc.is_some_and(|l| l.file.ends_with("tcgen05.rs")), "{f}");

    let (rep, _) = run(Bugs { dealloc_by_other_warp: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::TmemAlloc, "// DEALLOC");
    assert!(f.message.contains("by warp 1") && f.message.contains("warp 0 allocated"), "{f}");

    let (rep, _) = run(Bugs { double_alloc: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::TmemAlloc, "// BUG: double-alloc");
    assert!(f.message.contains("double allocation") && f.message.contains("tmem_slot"), "{f}");
}

#[test]
fn accesses_outside_the_allocation_or_the_warps_lanes_are_reported() {
    let (rep, _) = run(Bugs { outside_allocation: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::TmemOutOfBounds, "// LD");
    assert!(f.message.contains("columns 64-127") && f.message.contains("columns 0-63"), "{f}");
    let (rep, _) = run(Bugs { wrong_lanes: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::TmemOutOfBounds, "// LD");
    assert!(f.message.contains("Access restrictions"), "{f}");
}

#[test]
fn the_mma_reads_shared_memory_through_the_async_proxy() {
    let (rep, _) = run(Bugs { no_proxy_fence: true, ..Bugs::default() }, Strategy::RoundRobin);
    let f = finding(&rep, Category::ProxyFence, "// MMA");
    assert!(f.message.contains("tcgen05.mma"), "{f}");
}

/// PTX ISA 9.7.16.6.4.5: "For `tcgen05.ld`, an intra-thread ordering through true register
/// dependency will be respected regardless of the presence or absence of other forms of
/// synchronization" -- the stores of the loaded registers see the data -- but "to enforce such
/// memory orderings and avoiding anti-dependency hazards around `tcgen05.ld`,
/// `tcgen05.wait::ld` must be used": without it the load's read of tensor memory is still in
/// flight when the owner warp frees the columns.
#[test]
fn an_ld_not_waited_for_is_still_reading_when_the_columns_are_freed() {
    let (rep, d) = run(Bugs { no_wait_ld: true, ..Bugs::default() }, Strategy::RoundRobin);
    assert_eq!(d, reference(), "register dependencies on tcgen05.ld are respected");
    let f = finding(&rep, Category::TmemRace, "// DEALLOC");
    assert!(f.message.contains("tcgen05.ld") && f.message.contains("tcgen05.wait"), "{f}");
}

// ---------------------------------------------------------------------------------------
// The datapath for each modelled kind and layout: one 128-byte K row per operand row (so K is
// 64 bf16, 32 tf32 or 128 FP8 elements: four MMAs), exact small integers, every element
// compared with a CPU product of the decoded inputs.

/// `d (m x n, f32) = a (m x K) * b (n x K)^T` with A and B given as raw little-endian words,
/// one 128-byte row per matrix row; A from shared memory or (`a_tmem`) stored into tensor
/// memory by the warps first.
fn typed_kernel(ea: UmmaElem, eb: UmmaElem, m: u32, n: u32, a_tmem: bool) -> Kernel {
    let mut k = KernelBuilder::new("tcgen05_typed", Target::Sm100a);
    let a = k.param_global("a", Type::U32, false);
    let b = k.param_global("b", Type::U32, false);
    let d = k.param_global("d", Type::F32, true);
    k.require_block(128, 1, 1);
    let g = CtaGroup::One;
    let k_elems = |e: UmmaElem| 128 / e.bytes();
    let a_tile = SmemTile::new(ea.bytes(), m, k_elems(ea), Swizzle::B128);
    let b_tile = SmemTile::new(eb.bytes(), n, k_elems(eb), Swizzle::B128);
    let smem = k.dynamic_shared(Type::U32, 0);
    let slot = k.alloc_shared("tmem_slot", Type::U32, 4);
    let bars = k.alloc_barriers("mma_done", 1);
    let tid = k.thread_idx(Dim::X);
    let warp = k.warp_idx();
    let lane = k.lane_idx();
    let base = k.shared_base_addr(smem);
    let b_base = k.add(base, Value::u32(a_tile.bytes().max(1024)));
    // Words of a 128-byte row: the same bytes whatever the element size.
    for (rows, src, at) in [(m, a, base), (n, b, b_base)] {
        let words = SmemTile::new(4, rows, 32, Swizzle::B128);
        k.for_range_step(tid, Value::u32(rows * 32), 128, |k, i| {
            let row = k.div(i, Value::u32(32));
            let col = k.rem(i, Value::u32(32));
            let v = k.ld_global(src, i);
            let addr = k.smem_tile_addr(&words, at, row, col);
            k.st_raw(phaser::codegen::ir::Space::Shared, addr, 0, v);
        });
    }
    k.fence_proxy_async(ProxySpace::SharedCta);
    let bar = k.barrier_at(bars, Value::u32(0));
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.fence_mbarrier_init();
    });
    // D in columns 0..n, A (when in tensor memory) in the 32 columns after it.
    let cols = (n + 32).next_power_of_two().max(32);
    let alloc = TmemAlloc::new(&mut k, g, cols);
    let slot_addr = k.shared_base_addr(slot);
    let w0 = k.eq(warp, Value::u32(0));
    k.if_then(w0, |k| alloc.allocate(k, slot_addr));
    k.cta_sync();
    let tmem = k.ld_shared(slot, Value::u32(0));
    let row = k.mad(warp, Value::u32(32), lane);
    let a_col = k.add(tmem, Value::u32(n));
    if a_tmem {
        // Warp w stores rows 32w.. (lane = row): 32 words, 8 per instruction's K.
        let lanes = k.mul(warp, Value::u32(32 << 16));
        let at = k.add(a_col, lanes);
        let in_m = k.lt(row, Value::u32(m));
        let words: Vec<Value> = (0..32)
            .map(|w| {
                let i = k.mad(row, Value::u32(32), Value::u32(w));
                let safe = k.select(in_m, i, Value::u32(0));
                k.ld_global(a, safe)
            })
            .collect();
        k.tcgen05_st(LdStShape::S32x32b, 32, at, &words);
        k.tcgen05_wait_st();
        k.tcgen05_fence_before_thread_sync();
        k.cta_sync();
    }
    k.if_then(w0, |k| {
        k.elect_one(|k| {
            k.tcgen05_fence_after_thread_sync();
            let ad = k.umma_desc(ea, MmaOperand::new(a_tile, Major::K), base);
            let bd = k.umma_desc(eb, MmaOperand::new(b_tile, Major::K), b_base);
            let id = k.instr_desc(InstrDesc::new(ea, eb, m, n), g);
            let kk = ea.k();
            for step in 0..4 {
                let acc = Value::pred(step > 0);
                if a_tmem {
                    let a_at = k.add(a_col, Value::u32(8 * step));
                    k.tcgen05_mma_tmem_a(&id, tmem, a_at, &bd, 0, kk * step, acc);
                } else {
                    k.tcgen05_mma(&id, tmem, &ad, 0, &bd, 0, kk * step, acc);
                }
            }
            k.tcgen05_commit(bar);
        });
    });
    k.mbarrier_wait(bar, Value::u32(0));
    k.tcgen05_fence_after_thread_sync();
    let lane_off = k.mul(warp, Value::u32(32 << 16));
    let taddr = k.add(tmem, lane_off);
    let vals = k.tcgen05_ld(LdStShape::S32x32b, n, taddr, Type::F32);
    k.tcgen05_wait_ld();
    // Tensor-memory lane `row` holds D row `row` (M = 128) or, for M = 64 (Layout F), row
    // 16 (lane / 32) + lane % 32 when lane % 32 < 16.
    let (d_row, valid) = if m == 64 {
        let q = k.mul(warp, Value::u32(16));
        (k.add(q, lane), k.lt(lane, Value::u32(16)))
    } else {
        (row, Value::pred(true))
    };
    k.if_then(valid, |k| {
        for (j, v) in vals.iter().enumerate() {
            let at = k.mad(d_row, Value::u32(n), Value::u32(j as u32));
            k.st_global(d, at, *v);
        }
    });
    k.tcgen05_fence_before_thread_sync();
    k.cta_sync();
    k.if_then(w0, |k| alloc.free(k, tmem));
    k.finish().unwrap()
}

/// The bytes of small integers in `e` (exact in every modelled type).
fn encode(e: UmmaElem, x: f32) -> Vec<u8> {
    match e {
        UmmaElem::BF16 => half::bf16::from_f32(x).to_le_bytes().to_vec(),
        UmmaElem::F16 => half::f16::from_f32(x).to_le_bytes().to_vec(),
        UmmaElem::TF32 => x.to_le_bytes().to_vec(),
        // OCP FP8: 0, +-1 (exp 7 / 15) and +-2 (exp 8 / 16).
        UmmaElem::E4M3 | UmmaElem::E5M2 => {
            let (bias, mant) = if e == UmmaElem::E4M3 { (7u8, 3) } else { (15, 2) };
            let mag = x.abs() as u8;
            let bits = if mag == 0 { 0 } else { (bias + (mag - 1)) << mant };
            vec![bits | if x < 0.0 { 0x80 } else { 0 }]
        }
    }
}

fn typed_run(ea: UmmaElem, eb: UmmaElem, m: u32, n: u32, a_tmem: bool) {
    let what = format!("{}x{} m{m} n{n}{}", ea.name(), eb.name(), if a_tmem { " (A in tensor memory)" } else { "" });
    let vals = |rows: u32, e: UmmaElem, salt: u32| -> (Vec<f32>, Vec<u32>) {
        let per = 128 / e.bytes();
        let xs: Vec<f32> = (0..rows * per).map(|i| ((i * 7 + salt) % 5) as f32 - 2.0).collect();
        let bytes: Vec<u8> = xs.iter().flat_map(|&x| encode(e, x)).collect();
        let words = bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        (xs, words)
    };
    let (xa, wa) = vals(m.max(128), ea, 1);
    let (xb, wb) = vals(n, eb, 3);
    let kern = typed_kernel(ea, eb, m, n, a_tmem);
    let dev = Device::sim(SimConfig::default().with_strategy(Strategy::Random).with_seed(2));
    let (ga, gb) = (dev.upload(&wa).unwrap(), dev.upload(&wb).unwrap());
    let gd = dev.upload(&vec![f32::NAN; (m * n) as usize]).unwrap();
    let cfg = LaunchConfig::linear(1, 128).with_dynamic_shared(1024 + 2 * 128 * 128);
    let rep = dev.simulate(&kern, cfg, &[Arg::buffer(&ga), Arg::buffer(&gb), Arg::buffer(&gd)]).unwrap();
    assert!(rep.findings.is_empty(), "{what}:\n{}", rep.text());
    let got = dev.download(&gd).unwrap();
    let ka = (128 / ea.bytes()) as usize;
    for i in 0..m as usize {
        for j in 0..n as usize {
            let want: f32 = (0..ka).map(|kk| xa[i * ka + kk] * xb[j * ka + kk]).sum();
            assert_eq!(got[i * n as usize + j], want, "{what}: D[{i}][{j}]");
        }
    }
}

#[test]
fn every_modelled_kind_and_layout_computes_exactly() {
    typed_run(UmmaElem::BF16, UmmaElem::BF16, 128, 64, false);
    typed_run(UmmaElem::F16, UmmaElem::F16, 128, 32, false);
    typed_run(UmmaElem::TF32, UmmaElem::TF32, 128, 32, false);
    typed_run(UmmaElem::E4M3, UmmaElem::E5M2, 128, 32, false);
    // M = 64: data-path Layout F (rows in the first 16 lanes of each warp's 32).
    typed_run(UmmaElem::BF16, UmmaElem::BF16, 64, 32, false);
    // A from tensor memory, stored there by the warps (tcgen05.st, wait::st, fences).
    typed_run(UmmaElem::BF16, UmmaElem::BF16, 128, 32, true);
}
