//! Every form of `T.ptx.wgmma.mma_async` in one DSL kernel and its check on any device
//! (`tests/dsl_wgmma.rs` runs it in the simulator, `tests/gpu_wgmma.rs` on the H200): a 64 x 64
//! x 64 product `D = A * B` from typed 128-byte-swizzled tiles filled by TMA, with B K-major
//! (`[N, K]`) or MN-major (`[K, N]`, `imm-trans-b`), negated multiplicands, and A from
//! registers (the A fragment loaded by each thread from the tile). The inputs are small
//! integers, so every form must match the CPU exactly.

#![allow(dead_code)]

use half::bf16;
use phaser::{Device, LaunchConfig, Swizzle};

/// M = N = K of the product (one warpgroup, one 64 x 64 accumulator, four k16 steps).
pub const E: u32 = 64;

/// The forms, by `FORM`.
pub const FORMS: [&str; 4] = ["A, B K-major", "B MN-major", "A negated in k-steps 0-1, B in 2", "A from registers"];

#[phaser::kernel(target = "sm_90a")]
pub fn wgmma_forms(
    #[tma(box = [E, E], swizzle = "128B")] a: TensorMap<bf16, 2>,
    #[tma(box = [E, E], swizzle = "128B")] b_nk: TensorMap<bf16, 2>,
    #[tma(box = [E, E], swizzle = "128B", major = "mn")] b_kn: TensorMap<bf16, 2>,
    d: &mut [f32],
    #[comptime] FORM: u32,
) {
    T.require_block(128, 1, 1);
    let a_tile = T.alloc_shared::<bf16>([E, E], "128B");
    let b_tile = T.alloc_shared::<bf16>([E, E], "128B");
    let bars = T.alloc_barriers(1);
    let full = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(full, 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if t == 0 {
        T.ptx.mbarrier.arrive.expect_tx(full, a_tile.bytes() + b_tile.bytes());
        T.tma.load(a_tile, a, [0, 0], full);
        if FORM == 1 {
            T.tma.load(b_tile, b_kn, [0, 0], full);
        } else {
            T.tma.load(b_tile, b_nk, [0, 0], full);
        }
    }
    T.ptx.mbarrier.try_wait(full, 0);
    let mut acc = T.registers::<f32>([E / 2]);
    // The A fragment of each k-step (PTX ISA: "register fragment layout for matrix A"):
    // register r of thread t holds the bf16 pair at row 16w + l/4 + 8(r % 2), columns
    // 16k + 8(r / 2) + 2(l % 4) and the next.
    let mut frag = T.registers::<u32>([4, 4]);
    let lane = t & 31;
    if FORM == 3 {
        #[unroll]
        for kk in 0..4 {
            #[unroll]
            for r in 0..4 {
                let row = (t >> 5) * 16 + lane / 4 + 8 * (r % 2);
                let col = 16 * kk + 8 * (r / 2) + 2 * (lane % 4);
                frag[kk][r] = T.ptx.ld.shared::<u32>(T.tile_addr(a_tile, [row, col]));
            }
        }
    }
    T.ptx.wgmma.fence();
    #[unroll]
    for kk in 0..4 {
        if FORM == 0 {
            T.ptx.wgmma.mma_async(acc, a_tile, b_tile, kk, kk > 0, "k");
        }
        if FORM == 1 {
            T.ptx.wgmma.mma_async(acc, a_tile, b_tile, kk, kk > 0, "mn");
        }
        if FORM == 2 {
            if kk < 2 {
                T.ptx.wgmma.mma_async(acc, a_tile, b_tile, kk, kk > 0, "k", "k", "a");
            } else if kk == 2 {
                T.ptx.wgmma.mma_async(acc, a_tile, b_tile, kk, true, "k", "k", "b");
            } else {
                T.ptx.wgmma.mma_async(acc, a_tile, b_tile, kk, true, "k");
            }
        }
        if FORM == 3 {
            T.ptx.wgmma.mma_async_rs(acc, frag[kk], b_tile, kk, kk > 0, "k");
        }
    }
    T.ptx.wgmma.commit_group();
    T.ptx.wgmma.wait_group(0);
    // Register i of thread t holds D at row 16w + l/4 + 8((i/2) % 2), column 8(i/4) + 2(l%4) + i%2.
    #[unroll]
    for i in 0..E / 2 {
        let row = (t >> 5) * 16 + lane / 4 + 8 * ((i / 2) % 2);
        let col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        d[row * E + col] = acc[i];
    }
}

/// Small integers (exact products and sums in f32).
fn ints(n: usize, mul: usize, add: usize, modulo: usize) -> Vec<bf16> {
    (0..n).map(|i| bf16::from_f32(((i * mul + add) % modulo) as f32 - (modulo / 2) as f32)).collect()
}

/// `D[m][n] = sum_k sign(k) A[m][k] B[n][k]`, the sign of a k-step as form `form` negates.
pub fn reference(form: u32, a: &[bf16], b_nk: &[bf16]) -> Vec<f32> {
    let e = E as usize;
    let sign = |k: usize| if form == 2 && k < 48 { -1.0 } else { 1.0 };
    (0..e * e)
        .map(|x| {
            let (m, n) = (x / e, x % e);
            (0..e).map(|k| sign(k) * a[m * e + k].to_f32() * b_nk[n * e + k].to_f32()).sum()
        })
        .collect()
}

/// Run every form on `dev` and compare with the CPU, bit for bit.
pub fn check_wgmma_forms(dev: &Device) {
    let e = E as usize;
    let a = ints(e * e, 7, 3, 5);
    let b_nk = ints(e * e, 3, 1, 7);
    let b_kn: Vec<bf16> = (0..e * e).map(|x| b_nk[(x % e) * e + x / e]).collect();
    let (ga, gb, gbt) = (dev.upload(&a).unwrap(), dev.upload(&b_nk).unwrap(), dev.upload(&b_kn).unwrap());
    let sq = [E as u64, E as u64];
    let am = dev.tensor_map(&ga, &sq, &[E, E], Swizzle::B128).unwrap();
    let bm = dev.tensor_map(&gb, &sq, &[E, E], Swizzle::B128).unwrap();
    let btm = dev.tensor_map(&gbt, &sq, &[E, E], Swizzle::B128).unwrap();
    for (form, what) in FORMS.iter().enumerate() {
        let form = form as u32;
        let mut gd = dev.upload(&vec![f32::NAN; e * e]).unwrap();
        wgmma_forms::launch(dev, LaunchConfig::linear(1, 128), &am, &bm, &btm, &mut gd, form)
            .unwrap_or_else(|err| panic!("form {form} ({what}): {err}"));
        let got = dev.download(&gd).unwrap();
        let want = reference(form, &a, &b_nk);
        let bad = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
        assert_eq!(bad, 0, "form {form} ({what}) on {}: {bad} of {} wrong", dev.describe(), e * e);
    }
}
