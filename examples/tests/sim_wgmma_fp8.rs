//! FP8 wgmma in the simulator through typed tiles: one warpgroup computes `D (64 x 32) = A
//! (64 x 64) * B` with two k32 `wgmma.mma_async` from e4m3/e5m2 tiles (64-byte swizzled,
//! K-major: FP8 has no transposes), staged by ordinary stores of packed bytes. The results
//! are the simulator's model bit for bit (products exact, the f32 sum rounded after each
//! product in k order) and agree with an f64 reference of the dequantized product within the
//! f32 sum's bound; the run has no findings.

use phaser::codegen::arch::fragment::d_register_offset;
use phaser::codegen::builder::{KernelBuilder, MmaOptions, TileLayout, TileShape};
use phaser::codegen::eval::exec::fp8_value;
use phaser::codegen::ir::{Dim, Major, ProxySpace, Space, Swizzle, Type, Value};
use phaser::codegen::{Kernel, Target};
use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig};
use rand::{Rng, SeedableRng};

const M: u32 = 64;
const N: u32 = 32;
const K: u32 = 64;

/// The kernel for A of `a_ty` and B of `b_ty`, B K-major unless `b_major` says otherwise;
/// `Err` carries the build error.
fn kernel(a_ty: Type, b_ty: Type, b_major: Major) -> phaser::codegen::Result<Kernel> {
    let mut k = KernelBuilder::new("wgmma_fp8", Target::Sm90a);
    k.require_block(128, 1, 1);
    // Four FP8 elements per u32, the lowest byte first (row-major, K innermost).
    let a_g = k.param_global("a", Type::U32, false);
    let b_g = k.param_global("b", Type::U32, false);
    let out = k.param_global("out", Type::F32, true);
    let layout = TileLayout::Swizzled(Swizzle::B64);
    let a = k.alloc_tile("a_tile", &TileShape::new(a_ty, &[M, K], layout));
    let b = k.alloc_tile("b_tile", &TileShape::new(b_ty, &[N, K], layout));
    let t = k.thread_idx(Dim::X);
    for (g, tile, rows) in [(a_g, a, M), (b_g, b, N)] {
        let st = tile.smem_tile().expect("a descriptor-able tile");
        let base = k.tile_addr(tile);
        for w0 in (0..rows * K / 4).step_by(128) {
            let w = k.add(t, Value::u32(w0));
            let row = k.div(w, Value::u32(K / 4));
            let word = k.rem(w, Value::u32(K / 4));
            let col = k.mul(word, Value::u32(4));
            let v = k.ld_global(g, w);
            // Four consecutive bytes stay within one 16-byte chunk under the swizzle.
            let at = k.smem_tile_addr(&st, base, row, col);
            k.st_raw(Space::Shared, at, 0, v);
        }
    }
    k.fence_proxy_async(ProxySpace::SharedCta);
    k.cta_sync();
    let acc = k.alloc_registers(Type::F32, &[N / 2]);
    k.wgmma_fence();
    let opts = MmaOptions { b_major, ..MmaOptions::default() };
    for step in 0..K / 32 {
        k.wgmma_tiles(acc, a, b, step, Value::pred(step > 0), opts);
    }
    k.wgmma_commit_group();
    k.wgmma_wait_group(0);
    // Register i holds (row, col) of arch::fragment::d_element: its thread's origin plus the
    // register's offset.
    let (row0, col0) = k.fragment_origin();
    for i in 0..N / 2 {
        let (dr, dc) = d_register_offset(i);
        let row = k.add(row0, Value::u32(dr));
        let col = k.add(col0, Value::u32(dc));
        let idx = k.mad(row, Value::u32(N), col);
        let v = k.get_register(acc, Value::u32(i));
        k.st_global(out, idx, v);
    }
    k.finish()
}

/// Random finite FP8 bytes of `ty` (NaN and infinity codes redrawn).
fn fp8_bytes(ty: Type, n: u32, seed: u64) -> Vec<u8> {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| loop {
            let b: u8 = r.random();
            if fp8_value(ty, b).is_finite() {
                break b;
            }
        })
        .collect()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn fp8_tiles_multiply_as_the_model_and_the_f64_reference_say() {
    for (a_ty, b_ty) in [(Type::E4M3, Type::E4M3), (Type::E4M3, Type::E5M2), (Type::E5M2, Type::E4M3)] {
        let k = kernel(a_ty, b_ty, Major::K).unwrap();
        let ptx = phaser::codegen::emit_kernel(&k).unwrap();
        let mnemonic = format!("wgmma.mma_async.sync.aligned.m64n{N}k32.f32.{a_ty}.{b_ty}");
        assert_eq!(ptx.matches(&mnemonic).count(), 2, "{ptx}");
        let (a, b) = (fp8_bytes(a_ty, M * K, 1), fp8_bytes(b_ty, N * K, 2));
        let dev = Device::sim(SimConfig::default());
        let (ga, gb) = (dev.upload(&words(&a)).unwrap(), dev.upload(&words(&b)).unwrap());
        let out = dev.alloc::<f32>((M * N) as usize).unwrap();
        let report = dev
            .launch(&k, LaunchConfig::linear(1, 128), &[Arg::buffer(&ga), Arg::buffer(&gb), Arg::buffer(&out)])
            .unwrap_or_else(|e| panic!("{a_ty} x {b_ty}: {e}"));
        let findings = report.sim.expect("a simulator report").findings;
        assert!(findings.is_empty(), "{a_ty} x {b_ty}: {findings:?}");
        let d = dev.download(&out).unwrap();
        let (av, bv) = (
            |i: u32, kk: u32| fp8_value(a_ty, a[(i * K + kk) as usize]),
            |j: u32, kk: u32| fp8_value(b_ty, b[(j * K + kk) as usize]),
        );
        let mut big = 0;
        for i in 0..M {
            for j in 0..N {
                // The model: each product exact in f32, the sum rounded after each, k in order.
                let model = (0..K).fold(0f32, |s, kk| s + (av(i, kk) * bv(j, kk)) as f32);
                let got = d[(i * N + j) as usize];
                assert_eq!(got.to_bits(), model.to_bits(), "{a_ty} x {b_ty}: D[{i}][{j}]");
                let exact: f64 = (0..K).map(|kk| av(i, kk) * bv(j, kk)).sum();
                let magnitude: f64 = (0..K).map(|kk| (av(i, kk) * bv(j, kk)).abs()).sum();
                let bound = K as f64 * f32::EPSILON as f64 * magnitude;
                assert!((got as f64 - exact).abs() <= bound, "{a_ty} x {b_ty}: D[{i}][{j}] {got} vs {exact}");
                big += (exact.abs() > 1.0) as u32;
            }
        }
        assert!(big > 0, "not vacuous");
    }
}

#[test]
fn an_mn_major_fp8_operand_is_a_build_error_naming_the_rule() {
    let e = kernel(Type::E4M3, Type::E4M3, Major::MN).unwrap_err();
    let messages: Vec<&str> = e.diagnostics.iter().map(|d| d.message.as_str()).collect();
    // One mistake, one message (no shape complaints about a layout that does not exist).
    assert_eq!(messages, ["wgmma: B: MN-major (transposed) wgmma operands exist only for f16/bf16"], "{e}");
    assert_eq!(e.diagnostics[0].loc.map(|l| l.file), Some(file!()), "{e}");
}
