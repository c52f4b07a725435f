//! A Blackwell MMA written in the DSL (not the builder): typed 128-byte-swizzled tiles filled by
//! TMA, `T.ptx.tcgen05.*` for tensor memory, the MMA and its commit, `#[unroll]` over a register
//! array for the accumulator read-back. It runs in the simulator under the checker (no
//! Blackwell GPU here) and must compute `D = A * B^T` exactly with zero findings; its PTX
//! must assemble with `ptxas -arch=sm_100a`.

use half::bf16;
use phaser::codegen::ptxas;
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig, Swizzle};

const M: u32 = 128;
const N: u32 = 64;
const K: u32 = 64;

/// `D (M x N, f32, tensor memory) = A (M x K) * B (N x K)^T`, both K-major in shared memory.
#[phaser::kernel(target = "sm_100a")]
fn umma_tile(
    #[tma(box = [128, 64], swizzle = "128B")] a: TensorMap<bf16, 2>,
    #[tma(box = [64, 64], swizzle = "128B")] b: TensorMap<bf16, 2>,
    d: &mut [f32],
    #[comptime] BUG: u32,
) {
    T.require_block(128, 1, 1);
    let a_tile = T.alloc_shared::<bf16>([M, K], "128B");
    let b_tile = T.alloc_shared::<bf16>([N, K], "128B");
    let slot = T.alloc_shared::<u32>([1]);
    let bars = T.alloc_barriers(2);
    let full = bars.ptr_to([0]);
    let done = bars.ptr_to([1]);
    let t = T.thread_idx();
    let warp = T.warp_idx();
    // Warp 0 allocates N columns (a power of two >= 32); the address lands in `slot[0]`.
    if warp == 0 {
        T.ptx.tcgen05.alloc(slot, N);
        T.ptx.tcgen05.relinquish_alloc_permit();
    }
    if t == 32 {
        T.ptx.mbarrier.init(full, 1);
        T.ptx.mbarrier.init(done, 1);
        T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.arrive.expect_tx(full, a_tile.bytes() + b_tile.bytes());
        T.tma.load(a_tile, a, [0, 0], full);
        T.tma.load(b_tile, b, [0, 0], full);
    }
    // The allocation's write of `slot` is tcgen05 work ordered by this CTA barrier.
    T.ptx.tcgen05.fence.before_thread_sync();
    T.cuda.cta_sync();
    T.ptx.tcgen05.fence.after_thread_sync();
    let taddr = slot[0];
    if t == 0 {
        T.ptx.mbarrier.try_wait(full, 0);
        #[unroll]
        for k in 0..K / 16 {
            // One K=16 step is 32 bytes further along the swizzled row.
            let a_desc = T.ptx.tcgen05.smem_desc(T.shared_addr(a_tile) + 32 * k, M, K, "bf16", "k", "128B");
            let b_desc = T.ptx.tcgen05.smem_desc(T.shared_addr(b_tile) + 32 * k, N, K, "bf16", "k", "128B");
            T.ptx.tcgen05.mma(taddr, a_desc, b_desc, k > 0, "bf16", M, N);
        }
        T.ptx.tcgen05.commit(done); // ACC-COMMIT
    }
    // BUG 1: the epilogue reads TMEM without waiting for the accumulator barrier.
    if BUG != 1 {
        T.ptx.mbarrier.try_wait(done, 0);
    }
    // BUG 2: the wait orders the MMA before the reads only with this fence.
    if BUG != 2 {
        T.ptx.tcgen05.fence.after_thread_sync();
    }
    // Warp w reads lanes 32w..32w+31 (`.32x32b`): thread t holds row t of D.
    let lane_base = taddr + ((warp * 32) << 16);
    let mut acc = T.registers::<f32>([N]);
    #[unroll]
    for c in 0..N {
        acc[c] = T.ptx.tcgen05.ld::<f32>(lane_base + c); // TMEM-LD
    }
    T.ptx.tcgen05.wait.ld();
    #[unroll]
    for c in 0..N {
        d[t * N + c] = acc[c];
    }
    T.ptx.tcgen05.fence.before_thread_sync();
    T.cuda.cta_sync();
    if warp == 0 {
        T.ptx.tcgen05.fence.after_thread_sync();
        T.ptx.tcgen05.dealloc(taddr, N);
    }
}

fn inputs() -> (Vec<bf16>, Vec<bf16>) {
    // Small integers: every product and sum is exact in f32.
    let a = (0..M * K).map(|i| bf16::from_f32(((i * 7 + 3) % 5) as f32 - 2.0)).collect();
    let b = (0..N * K).map(|i| bf16::from_f32(((i * 3 + 1) % 7) as f32 - 3.0)).collect();
    (a, b)
}

fn reference(a: &[bf16], b: &[bf16]) -> Vec<f32> {
    let (n, k) = (N as usize, K as usize);
    (0..(M * N) as usize)
        .map(|e| (0..k).map(|kk| a[(e / n) * k + kk].to_f32() * b[(e % n) * k + kk].to_f32()).sum())
        .collect()
}

#[test]
fn a_dsl_umma_tile_computes_exactly_with_no_finding() {
    let (a, b) = inputs();
    let want = reference(&a, &b);
    for strategy in [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial] {
        let dev = Device::sim(SimConfig::default().with_strategy(strategy).with_seed(5));
        let (ga, gb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
        let am = dev.tensor_map(&ga, &[K as u64, M as u64], &[K, M], Swizzle::B128).unwrap();
        let bm = dev.tensor_map(&gb, &[K as u64, N as u64], &[K, N], Swizzle::B128).unwrap();
        let mut gd = dev.upload(&vec![f32::NAN; (M * N) as usize]).unwrap();
        // Through the generated launcher (error findings would fail it) ...
        umma_tile::launch(&dev, LaunchConfig::linear(1, 128), &am, &bm, &mut gd, 0).unwrap();
        assert_eq!(dev.download(&gd).unwrap(), want, "{strategy:?}");
        // ... and through the simulator's report: no finding of any severity.
        let k = umma_tile::kernel_for(0).unwrap();
        let cfg = LaunchConfig::linear(1, 128).with_dynamic_shared(k.declared_dynamic_bytes());
        let rep = dev.simulate(&k, cfg, &[Arg::from(&am), Arg::from(&bm), Arg::buffer(&gd)]).unwrap();
        assert!(rep.findings.is_empty(), "{strategy:?}: {:#?}", rep.findings);
    }
}

#[test]
fn the_dsl_umma_tile_assembles_for_sm_100a_without_spills() {
    let ptx = umma_tile::ptx_for(0).unwrap();
    use phaser::codegen::ptx_text::has;
    assert!(has(&ptx, "tcgen05.mma.cta_group::1.kind::f16"), "{ptx}");
    assert!(has(&ptx, "tcgen05.commit.cta_group::1.mbarrier::arrive::one.*"), "{ptx}");
    let log =
        ptxas::assemble_with(&ptxas::require(), &ptx, "sm_100a", &["-v"]).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    assert!(log.contains("0 bytes spill stores") && log.contains("0 bytes spill loads"), "{log}");
}

/// The line of this file holding `marker`.
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("dsl_tcgen05.rs").lines().collect();
    lines.iter().position(|l| l.contains(marker) && !l.contains('"')).unwrap() as u32 + 1
}

fn run_bug(bug: u32) -> SimReport {
    let (a, b) = inputs();
    let dev = Device::sim(SimConfig::default().with_seed(5));
    let (ga, gb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let am = dev.tensor_map(&ga, &[K as u64, M as u64], &[K, M], Swizzle::B128).unwrap();
    let bm = dev.tensor_map(&gb, &[K as u64, N as u64], &[K, N], Swizzle::B128).unwrap();
    let gd = dev.upload(&vec![0f32; (M * N) as usize]).unwrap();
    let k = umma_tile::kernel_for(bug).unwrap();
    let cfg = LaunchConfig::linear(1, 128).with_dynamic_shared(k.declared_dynamic_bytes());
    dev.simulate(&k, cfg, &[Arg::from(&am), Arg::from(&bm), Arg::buffer(&gd)]).unwrap()
}

/// Protocol mistakes in the DSL kernel are findings at the DSL line of the TMEM read.
#[test]
fn dsl_protocol_bugs_are_reported_at_the_rust_line() {
    for (bug, category, says) in [
        (1, Category::TmemRace, "before the commit's barrier phase completed"),
        (2, Category::Tcgen05Fence, "tcgen05.fence::after_thread_sync"),
    ] {
        let rep = run_bug(bug);
        let at_ld = |f: &&phaser::runtime::sim::Finding| {
            f.loc.is_some_and(|l| l.file.ends_with("dsl_tcgen05.rs") && l.line == line_of("// TMEM-LD"))
        };
        assert!(
            rep.findings.iter().filter(at_ld).any(|f| f.category == category && f.message.contains(says)),
            "bug {bug}: no {category} finding at the TMEM read saying {says:?}:\n{}",
            rep.text()
        );
    }
}
