//! `T.fragment.*` in one DSL kernel and its check on any device (`tests/dsl_fragment.rs` runs
//! it in the simulator, `tests/gpu_fragment.rs` on the H200). A warpgroup's 64 x 64 f32
//! accumulator is filled by (row, col) from `T.fragment.row`/`col`; the kernel writes the
//! coordinates, the row reductions, the accumulator rounded into A fragments and multiplied
//! by an identity B (`mma_async_rs`: P · I = P) and scaled per row (`of_row`), and the accumulator masked by a column bound
//! and a causal diagonal. Everything is compared with the layouts of
//! `phaser::codegen::arch::fragment` and plain CPU arithmetic; the values are small integers,
//! so every comparison is exact.

#![allow(dead_code)]

use half::bf16;
use phaser::codegen::arch::fragment;
use phaser::{Device, LaunchConfig, Swizzle};

/// Rows, columns and K of the tiles (one warpgroup, one 64 x 64 accumulator).
pub const E: u32 = 64;
/// Values per thread in `reds`.
pub const REDS: usize = 6;

/// The element at (row, col): a small integer, exact in bf16 and in every sum here.
pub fn value(row: u32, col: u32) -> f32 {
    ((row * 7 + col * 3) % 11) as f32 - 5.0
}

#[phaser::kernel(target = "sm_90a")]
pub fn fragment_probe(
    #[tma(box = [E, E], swizzle = "128B")] identity: TensorMap<bf16, 2>,
    coords: &mut [u32],
    reds: &mut [f32],
    product: &mut [f32],
    masked: &mut [f32],
    limit: u32,
    diag: i32,
) {
    T.require_block(128, 1, 1);
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
        T.ptx.mbarrier.arrive.expect_tx(full, b_tile.bytes());
        T.tma.load(b_tile, identity, [0, 0], full);
    }
    let mut acc = T.registers::<f32>([E / 2]);
    #[unroll]
    for i in 0..E / 2 {
        let row = T.fragment.row(acc, i);
        let col = T.fragment.col(acc, i);
        coords[2 * (t * (E / 2) + i)] = row;
        coords[2 * (t * (E / 2) + i) + 1] = col;
        acc[i] = ((row * 7 + col * 3) % 11) as f32 - 5.0;
    }
    reds[t * 6] = T.fragment.row_max(acc, 0);
    reds[t * 6 + 1] = T.fragment.row_max(acc, 1);
    reds[t * 6 + 2] = T.fragment.row_sum(acc, 0);
    reds[t * 6 + 3] = T.fragment.row_sum(acc, 1, "row");
    reds[t * 6 + 4] = T.fragment.quad_sum(T.fragment.row_sum(acc, 0, "thread"));
    reds[t * 6 + 5] = T.fragment.quad_max(T.fragment.row_max(acc, 1, "thread"));

    // P = acc as the A operand of P · I.
    let mut p = T.registers::<u32>([E / 16, 4]);
    #[unroll]
    for kk in 0..E / 16 {
        T.fragment.to_a(p[kk], acc, kk);
    }
    let mut o = T.registers::<f32>([E / 2]);
    T.ptx.mbarrier.try_wait(full, 0);
    T.ptx.wgmma.fence();
    #[unroll]
    for kk in 0..E / 16 {
        T.ptx.wgmma.mma_async_rs(o, p[kk], b_tile, kk, kk > 0);
    }
    T.ptx.wgmma.commit_group();
    T.ptx.wgmma.wait_group(0);
    #[unroll]
    for i in 0..E / 2 {
        // Row half 0 doubled, half 1 quadrupled: a per-row factor per register.
        product[T.fragment.row(o, i) * E + T.fragment.col(o, i)] = o[i] * T.fragment.of_row(o, i, 2.0, 4.0);
    }

    T.fragment.mask_cols(acc, limit);
    T.fragment.mask_causal(acc, diag);
    #[unroll]
    for i in 0..E / 2 {
        masked[T.fragment.row(acc, i) * E + T.fragment.col(acc, i)] = acc[i];
    }
}

/// Run the probe on `dev` with the column bound `limit` and the diagonal `diag`, and compare
/// every output with the layouts and the CPU.
pub fn check_fragment_ops(dev: &Device, limit: u32, diag: i32) {
    let e = E as usize;
    let identity: Vec<bf16> = (0..e * e).map(|x| bf16::from_f32(if x / e == x % e { 1.0 } else { 0.0 })).collect();
    let gi = dev.upload(&identity).unwrap();
    let map = dev.tensor_map(&gi, &[E as u64, E as u64], &[E, E], Swizzle::B128).unwrap();
    let mut coords = dev.upload(&vec![u32::MAX; 128 * e]).unwrap();
    let mut reds = dev.upload(&vec![f32::NAN; 128 * REDS]).unwrap();
    let mut product = dev.upload(&vec![f32::NAN; e * e]).unwrap();
    let mut masked = dev.upload(&vec![f32::NAN; e * e]).unwrap();
    fragment_probe::launch(
        dev,
        LaunchConfig::linear(1, 128),
        &map,
        &mut coords,
        &mut reds,
        &mut product,
        &mut masked,
        limit,
        diag,
    )
    .unwrap_or_else(|err| panic!("{}: {err}", dev.describe()));
    let (coords, reds) = (dev.download(&coords).unwrap(), dev.download(&reds).unwrap());
    let (product, masked) = (dev.download(&product).unwrap(), dev.download(&masked).unwrap());
    for t in 0..128u32 {
        for i in 0..E / 2 {
            let at = 2 * (t * (E / 2) + i) as usize;
            assert_eq!((coords[at], coords[at + 1]), fragment::d_element(t, i), "thread {t}, register {i}");
        }
        let (r0, _) = fragment::thread_origin(t);
        let row = |r: u32| (0..E).map(move |c| value(r, c));
        let max = |r: u32| row(r).fold(f32::NEG_INFINITY, f32::max);
        let sum = |r: u32| row(r).sum::<f32>();
        let want = [max(r0), max(r0 + 8), sum(r0), sum(r0 + 8), sum(r0), max(r0 + 8)];
        let got = &reds[t as usize * REDS..][..REDS];
        assert_eq!(got, want, "thread {t} (rows {r0}, {}): max, max, sum, sum, quad sum, quad max", r0 + 8);
    }
    for r in 0..E {
        for c in 0..E {
            let at = (r * E + c) as usize;
            let factor = if r % fragment::WARP_ROWS < 8 { 2.0 } else { 4.0 };
            assert_eq!(product[at], value(r, c) * factor, "P · I, scaled by row, at ({r}, {c})");
            let out = c >= limit || c as i64 > r as i64 + diag as i64;
            let want = if out { f32::NEG_INFINITY } else { value(r, c) };
            assert_eq!(masked[at], want, "masked at ({r}, {c}), limit {limit}, diag {diag}");
        }
    }
}
