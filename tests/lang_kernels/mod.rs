//! Kernels of the DSL's language core and their checks on any device (`tests/dsl_lang.rs` runs
//! them in the simulator, `tests/gpu_lang.rs` on the GPU): `const` items and compile-time
//! `let`s, `#[unroll]` loops over register arrays, typed shared tiles filled by TMA with every
//! swizzle and read back by `tile[r][c]`, tensor maps checked at launch, and dynamic shared
//! memory sized from the kernel's tiles.

#![allow(dead_code)]

use phaser::codegen::ir::SmemTile;
use phaser::{Device, LaunchConfig, RuntimeError, Swizzle};

const ROWS: u32 = 8;

mod consts {
    pub const SCALE: u32 = 3;
}

// ---- constants and compile-time values ------------------------------------------------------

#[phaser::kernel(target = "sm_90a")]
pub fn compile_time_values(out: &mut [u32], #[comptime] BIG: u32) {
    T.require_block(32, 1, 1);
    let n = ROWS * consts::SCALE;
    let wide = if BIG > 1 { n * 2 } else { n };
    let halves = wide / 2 + wide % 5;
    let bars = T.alloc_barriers(ROWS / 4);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bars.ptr_to([ROWS / 4 - 1]), wide);
    }
    out[t] = wide + t;
    out[32 + t] = halves;
}

/// The values come out as the Rust computes them, and are immediates in the PTX.
pub fn check_compile_time_values(dev: &Device) {
    for (big, wide) in [(1u32, 24u32), (2, 48)] {
        let mut out = dev.alloc::<u32>(64).unwrap();
        compile_time_values::launch(dev, LaunchConfig::linear(1, 32), &mut out, big).unwrap();
        let got = dev.download(&out).unwrap();
        let want: Vec<u32> = (0..32).map(|t| wide + t).chain((0..32).map(|_| wide / 2 + wide % 5)).collect();
        assert_eq!(got, want, "BIG = {big}");
        // Compile-time values are immediates: the init count and the stored value need no arithmetic at run time.
        let ptx = compile_time_values::ptx_for(big).unwrap();
        let init = format!("mbarrier.init.shared::cta.b64 [%r*], {wide}");
        assert!(phaser::codegen::ptx_text::has(&ptx, &init), "the init count {wide} is an immediate:\n{ptx}");
        assert!(!ptx.contains("div.u32") && !ptx.contains("rem.u32"), "{ptx}");
    }
}

// ---- unrolled loops and register arrays -------------------------------------------------------

#[phaser::device]
fn weighted_total(acc: Registers<f32, 2>) -> f32 {
    let mut total = 0.0;
    #[unroll]
    for i in 0..4 {
        #[unroll]
        for j in 0..8 {
            total += acc[i][j] * ((i * 8 + j + 1) as f32);
        }
    }
    total
}

#[phaser::kernel(target = "sm_90a")]
pub fn register_sums(src: &[f32], out: &mut [f32], #[comptime] N: u32) {
    T.require_block(32, 1, 1);
    let t = T.thread_idx();
    let mut acc = T.registers::<f32>([4, 8]);
    #[unroll]
    for i in 0..N {
        #[unroll]
        for j in (0..8).step_by(1) {
            acc[i % 4][j] += src[(i * 8 + j) * 32 + t];
        }
    }
    let first = acc[0][0];
    acc[0][0] = 0.0;
    out[t] = weighted_total(acc) + first;
}

/// The same sums in the same order (f32 adds do not reassociate).
fn register_sums_reference(src: &[f32], n: u32) -> Vec<f32> {
    (0..32)
        .map(|t| {
            let mut acc = [[0f32; 8]; 4];
            for i in 0..n as usize {
                for j in 0..8 {
                    acc[i % 4][j] += src[(i * 8 + j) * 32 + t];
                }
            }
            let first = acc[0][0];
            acc[0][0] = 0.0;
            let mut total = 0f32;
            for (i, row) in acc.iter().enumerate() {
                for (j, x) in row.iter().enumerate() {
                    total += x * ((i * 8 + j + 1) as f32);
                }
            }
            total + first
        })
        .collect()
}

/// Register arrays through `#[unroll]` loops and a device function compute what Rust computes,
/// bit for bit.
pub fn check_register_sums(dev: &Device) {
    let src: Vec<f32> = (0..6 * 8 * 32).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
    let s = dev.upload(&src).unwrap();
    for n in [4u32, 6] {
        let mut out = dev.alloc::<f32>(32).unwrap();
        register_sums::launch(dev, LaunchConfig::linear(1, 32), &s, &mut out, n).unwrap();
        let got = dev.download(&out).unwrap();
        let want = register_sums_reference(&src, n);
        assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "N = {n}: {got:?}\n{want:?}");
    }
}

#[phaser::kernel(target = "sm_90a")]
pub fn spills(src: &[f32], out: &mut [f32]) {
    T.require_block(32, 1, 1);
    T.max_registers(32);
    let t = T.thread_idx();
    let mut acc = T.registers::<f32>([240]);
    #[unroll]
    for i in 0..240 {
        acc[i] = src[i * 32 + t];
    }
    #[unroll]
    for i in 0..240 {
        out[i * 32 + t] = acc[239 - i] * acc[i];
    }
}

// ---- typed tiles and TMA ----------------------------------------------------------------------

/// A `40 x 48` u32 tensor whose element (r, c) is `r * 1000 + c`.
const H: u32 = 40;
const W: u32 = 48;

fn tensor() -> Vec<u32> {
    (0..H).flat_map(|r| (0..W).map(move |c| r * 1000 + c)).collect()
}

/// The box at (row0, col0) of [`tensor`], row-major (zero outside the tensor, as TMA fills it).
fn window(row0: u32, col0: u32, rows: u32, cols: u32) -> Vec<u32> {
    (row0..row0 + rows)
        .flat_map(|r| (col0..col0 + cols).map(move |c| if r < H && c < W { r * 1000 + c } else { 0 }))
        .collect()
}

#[phaser::kernel(target = "sm_90a")]
fn row_major_tile(#[tma(box = [8, 20])] src: TensorMap<u32, 2>, out: &mut [u32], row0: u32, col0: u32) {
    T.require_block(32, 1, 1);
    let tile = T.alloc_shared::<u32>([8, 20]);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    if T.thread_idx() == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
        T.tma.load(tile, src, [row0 as i32, col0 as i32], bar);
    }
    T.cuda.cta_sync();
    T.ptx.mbarrier.try_wait(bar, 0);
    for e in (T.thread_idx()..160).step_by(32) {
        out[e] = tile[e / 20][e % 20];
    }
}

#[phaser::kernel(target = "sm_90a")]
fn swizzled_32b(#[tma(box = [16, 8], swizzle = "32B")] src: TensorMap<u32, 2>, out: &mut [u32], offsets: &mut [u32]) {
    T.require_block(128, 1, 1);
    let tile = T.alloc_shared::<u32>([16, 8], "32B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.arrive.expect_tx(bar, src.box_bytes());
        T.tma.load(tile, src, [3, 4], bar);
    }
    T.cuda.cta_sync();
    T.ptx.mbarrier.try_wait(bar, 0);
    let r = t / 8;
    let c = t % 8;
    out[t] = tile[r][c];
    offsets[t] = T.tile_addr(tile, [r, c]) - T.shared_addr(tile);
}

/// Two 64-byte boxes side by side: one `T.tma.load` issues a copy per column block.
#[phaser::kernel(target = "sm_90a")]
fn swizzled_64b_two_boxes(
    #[tma(box = [16, 16], swizzle = "64B")] src: TensorMap<u32, 2>,
    out: &mut [u32],
    offsets: &mut [u32],
) {
    T.require_block(512, 1, 1);
    let tile = T.alloc_shared::<u32>([16, 32], "64B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
        T.tma.load(tile, src, [16, 8], bar);
    }
    T.cuda.cta_sync();
    T.ptx.mbarrier.try_wait(bar, 0);
    let r = t / 32;
    let c = t % 32;
    out[t] = tile[r][c];
    offsets[t] = T.tile_addr(tile, [r, c]) - T.shared_addr(tile);
}

/// A two-stage ring of 128-byte swizzled tiles, each stage a sub-tile `ring[s]`, stored back
/// with TMA from a row-major tile after a transpose-free copy.
#[phaser::kernel(target = "sm_90a")]
pub fn swizzled_128b_ring(
    #[tma(box = [8, 32], swizzle = "128B")] src: TensorMap<u32, 2>,
    dst: TensorMap<u32, 2>,
    out: &mut [u32],
) {
    T.require_block(256, 1, 1);
    let ring = T.alloc_shared::<u32>([2, 8, 32], "128B");
    let staged = T.alloc_shared::<u32>([16, 32]);
    let bars = T.alloc_barriers(2);
    let t = T.thread_idx();
    if t == 0 {
        #[unroll]
        for s in 0..2 {
            let bar = bars.ptr_to([s]);
            T.ptx.mbarrier.init(bar, 1);
            T.ptx.mbarrier.arrive.expect_tx(bar, ring[s].bytes());
            T.tma.load(ring[s], src, [(8 * s + 1) as i32, 16], bar);
        }
    }
    T.cuda.cta_sync();
    let s = t / 128;
    T.ptx.mbarrier.try_wait(bars.ptr_to([s]), 0);
    for e in (t % 128..256).step_by(128) {
        let v = ring[s][e / 32][e % 32];
        out[s * 256 + e] = v;
        staged[s * 8 + e / 32][e % 32] = v;
    }
    T.ptx.fence.proxy_async("shared::cta");
    T.cuda.cta_sync();
    if t == 0 {
        T.tma.store(dst, [2, 0], staged);
        T.ptx.cp_async.bulk.commit_group();
        T.ptx.cp_async.bulk.wait_group(0);
    }
}

/// Every swizzle: `tile[r][c]` reads what the TMA copy wrote, `T.tile_addr` is
/// `SmemTile::offset`, sub-tiles of a ring load and a TMA store writes back.
pub fn check_tiles(dev: &Device) {
    let src = dev.upload(&tensor()).unwrap();
    let map = |b: &[u32], s| dev.tensor_map(&src, &[W as u64, H as u64], b, s).unwrap();
    let cfg = |threads| LaunchConfig::linear(1, threads);

    let mut out = dev.alloc::<u32>(160).unwrap();
    // Columns 32..52 of 48 and rows 35..43 of 40: partly outside the tensor in both dimensions,
    // at an inner coordinate the GPU accepts (a multiple of 16 bytes: TMA_INNER_COORD_ALIGN).
    row_major_tile::launch(dev, cfg(32), &map(&[20, 8], Swizzle::None), &mut out, 35, 32).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(35, 32, 8, 20), "row-major, partly outside the tensor");

    let (mut out, mut offs) = (dev.alloc::<u32>(128).unwrap(), dev.alloc::<u32>(128).unwrap());
    swizzled_32b::launch(dev, cfg(128), &map(&[8, 16], Swizzle::B32), &mut out, &mut offs).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(3, 4, 16, 8), "32-byte swizzle");
    let want: Vec<u32> = (0..128).map(|t| SmemTile::new(4, 16, 8, Swizzle::B32).offset(t / 8, t % 8)).collect();
    assert_eq!(dev.download(&offs).unwrap(), want, "T.tile_addr is SmemTile::offset");

    let (mut out, mut offs) = (dev.alloc::<u32>(512).unwrap(), dev.alloc::<u32>(512).unwrap());
    swizzled_64b_two_boxes::launch(dev, cfg(512), &map(&[16, 16], Swizzle::B64), &mut out, &mut offs).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(16, 8, 16, 32), "64-byte swizzle, two boxes");
    let want: Vec<u32> = (0..512).map(|t| SmemTile::new(4, 16, 32, Swizzle::B64).offset(t / 32, t % 32)).collect();
    assert_eq!(dev.download(&offs).unwrap(), want);

    let mut out = dev.alloc::<u32>(512).unwrap();
    let mut copy = dev.upload(&vec![0u32; (W * H) as usize]).unwrap();
    let dst = dev.tensor_map(&copy, &[W as u64, H as u64], &[32, 16], Swizzle::None).unwrap();
    swizzled_128b_ring::launch(dev, cfg(256), &map(&[32, 8], Swizzle::B128), &dst, &mut out).unwrap();
    let want: Vec<u32> = [window(1, 16, 8, 32), window(9, 16, 8, 32)].concat();
    assert_eq!(dev.download(&out).unwrap(), want, "128-byte swizzle, sub-tiles of a ring");
    let back = dev.download(&copy).unwrap();
    for r in 0..16 {
        for c in 0..32 {
            assert_eq!(back[((r + 2) * W + c) as usize], (r + 1) * 1000 + c + 16, "stored ({r}, {c})");
        }
    }
    let _ = &mut copy;
}

/// The coordinates `check_tiles` used before the H200 showed they fault: `row_major_tile` at
/// column 30 of u32 (120 bytes, not a multiple of 16). The simulator must refuse the launch
/// with a `misaligned` finding at the `T.tma.load`, not compute the window.
pub fn check_misaligned_inner_coordinate(dev: &Device) {
    let src = dev.upload(&tensor()).unwrap();
    let map = dev.tensor_map(&src, &[W as u64, H as u64], &[20, 8], Swizzle::None).unwrap();
    let mut out = dev.alloc::<u32>(160).unwrap();
    let e = row_major_tile::launch(dev, LaunchConfig::linear(1, 32), &map, &mut out, 35, 30).unwrap_err();
    let text = e.to_string();
    let finding = text.lines().skip_while(|l| !l.starts_with("error[misaligned]")).take(3).collect::<Vec<_>>();
    assert_eq!(finding.len(), 3, "{text}");
    assert!(
        finding[0].starts_with("error[misaligned] kernel `row_major_tile` CTA [0, 0, 0] warp 0 thread 0 "),
        "{text}"
    );
    assert!(finding[1].trim_start().starts_with("at tests/lang_kernels/mod.rs:163:"), "the `T.tma.load` line: {text}");
    assert_eq!(
        finding[2].trim(),
        "TMA tensor load: the innermost tensor coordinate 30 (of u32, 4 bytes each) is 120 bytes, not a multiple of \
         16: the GPU faults (CUDA_ERROR_ILLEGAL_INSTRUCTION; MISALIGNED_ADDRESS under the line-info JIT); use a \
         multiple of 4 u32 elements",
        "{text}"
    );
    // The aligned neighbour runs.
    row_major_tile::launch(dev, LaunchConfig::linear(1, 32), &map, &mut out, 35, 28).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(35, 28, 8, 20));
}

/// A map whose swizzle differs from the declaration, and a dynamic size below the tiles', are
/// launch errors (before the device sees the launch).
pub fn check_launch_errors(dev: &Device) {
    let src = dev.upload(&tensor()).unwrap();
    let mut out = dev.alloc::<u32>(128).unwrap();
    let mut offs = dev.alloc::<u32>(128).unwrap();
    let wrong = dev.tensor_map(&src, &[W as u64, H as u64], &[8, 16], Swizzle::B64).unwrap();
    let e = swizzled_32b::launch(dev, LaunchConfig::linear(1, 128), &wrong, &mut out, &mut offs).unwrap_err();
    assert!(matches!(e, RuntimeError::BadArgument { ref param, .. } if param == "src"), "{e}");
    assert!(e.to_string().contains("64-byte swizzle, expected 32-byte swizzle"), "{e}");
    // The dynamic shared memory the tiles need is what the launch got; a smaller explicit size
    // is an error, not a kernel writing past its window.
    let right = dev.tensor_map(&src, &[W as u64, H as u64], &[8, 16], Swizzle::B32).unwrap();
    let small = LaunchConfig::linear(1, 128).with_dynamic_shared(64);
    let e = swizzled_32b::launch(dev, small, &right, &mut out, &mut offs).unwrap_err();
    assert!(e.to_string().contains("the kernel's tiles need 512"), "{e}");
    assert_eq!(swizzled_32b::kernel().unwrap().declared_dynamic_bytes(), 512);
}

/// `dst` declares nothing: the tile stored through it sets what the launch checks.
pub fn check_implied_box() {
    // `dst` declares nothing: the tile stored through it sets what the launch checks.
    let k = swizzled_128b_ring::kernel().unwrap();
    let dst = k.params().iter().find(|p| p.name == "dst").unwrap();
    let spec = dst.tma.as_ref().expect("implied by the store");
    assert_eq!((spec.box_dims.clone(), spec.swizzle, spec.declared), (Some(vec![32, 16]), Some(Swizzle::None), false));
}

/// A `mut` register-array parameter is the caller's array: the helper's writes are the caller's.
#[phaser::device]
fn accumulate(mut acc: Registers<f32, 1>, v: f32) {
    #[unroll]
    for i in 0..4 {
        acc[i] += v * ((i + 1) as f32);
    }
}

/// An element returned by a helper is a copy: the array may change afterwards.
#[phaser::device]
fn first_element(acc: Registers<f32, 1>) -> f32 {
    acc[0]
}

#[phaser::kernel(target = "sm_90a")]
fn helper_writes_registers(out: &mut [f32]) {
    let t = T.thread_idx();
    let mut acc = T.registers::<f32>([4]);
    accumulate(acc, t as f32);
    accumulate(acc, 1.0);
    let before = first_element(acc);
    let also = acc[0];
    #[unroll]
    for i in 0..4 {
        out[i * 32 + t] = acc[i];
    }
    acc[0] = -1.0;
    out[128 + t] = before + also + acc[0];
}

/// A helper's writes to a `mut` register-array parameter are the caller's.
pub fn check_helper_registers(dev: &Device) {
    let mut out = dev.alloc::<f32>(160).unwrap();
    helper_writes_registers::launch(dev, LaunchConfig::linear(1, 32), &mut out).unwrap();
    let got = dev.download(&out).unwrap();
    for t in 0..32 {
        for i in 0..4 {
            assert_eq!(got[i * 32 + t], (t as f32 + 1.0) * (i + 1) as f32, "element {i} of thread {t}");
        }
        assert_eq!(got[128 + t], 2.0 * (t as f32 + 1.0) - 1.0, "copies taken before `acc[0] = -1` (thread {t})");
    }
}
