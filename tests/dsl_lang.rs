//! The language core of the DSL, run in the simulator: `const` items and compile-time `let`s,
//! `#[unroll]` loops over register arrays (which ptxas keeps in registers), typed shared tiles
//! filled by TMA with every swizzle and read back by `tile[r][c]`, tensor maps whose box and
//! swizzle are checked at launch, and dynamic shared memory sized from the kernel's tiles.

use phaser::codegen::ir::SmemTile;
use phaser::codegen::ptxas;
use phaser::runtime::sim::SimConfig;
use phaser::{Device, LaunchConfig, RuntimeError, Swizzle};

const ROWS: u32 = 8;

mod consts {
    pub const SCALE: u32 = 3;
}

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

// ---- constants and compile-time values ------------------------------------------------------

#[phaser::kernel(target = "sm_90a")]
fn compile_time_values(out: &mut [u32], #[comptime] BIG: u32) {
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

#[test]
fn consts_lets_and_ifs_are_compile_time() {
    for (big, wide) in [(1u32, 24u32), (2, 48)] {
        let dev = sim();
        let mut out = dev.alloc::<u32>(64).unwrap();
        compile_time_values::launch(&dev, LaunchConfig::linear(1, 32), &mut out, big).unwrap();
        let got = dev.download(&out).unwrap();
        let want: Vec<u32> = (0..32).map(|t| wide + t).chain((0..32).map(|_| wide / 2 + wide % 5)).collect();
        assert_eq!(got, want, "BIG = {big}");
        // Compile-time values are immediates: the init count and the stored value need no
        // arithmetic at run time.
        let ptx = compile_time_values::ptx_for(big).unwrap();
        assert!(ptx.contains(&format!(", {wide};")), "the init count {wide} is an immediate:\n{ptx}");
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
fn register_sums(src: &[f32], out: &mut [f32], #[comptime] N: u32) {
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

/// `(stack frame, spill stores, spill loads)` bytes from `ptxas -v`, and whether it reports
/// local memory (`lmem`).
fn local_memory(ptx: &str) -> (u32, u32, u32, bool) {
    let log = ptxas::assemble_with(&ptxas::require(), ptx, "sm_90a", &["-v"]).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let line = log.lines().find(|l| l.contains("bytes stack frame")).unwrap_or_else(|| panic!("no frame line:\n{log}"));
    let nums: Vec<u32> = line.split(',').map(|p| p.split_whitespace().next().unwrap().parse().unwrap()).collect();
    (nums[0], nums[1], nums[2], log.contains("lmem"))
}

#[test]
fn register_arrays_stay_in_registers_and_compute_what_rust_computes() {
    let dev = sim();
    let src: Vec<f32> = (0..6 * 8 * 32).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
    let s = dev.upload(&src).unwrap();
    for n in [4u32, 6] {
        let mut out = dev.alloc::<f32>(32).unwrap();
        register_sums::launch(&dev, LaunchConfig::linear(1, 32), &s, &mut out, n).unwrap();
        let got = dev.download(&out).unwrap();
        let want = register_sums_reference(&src, n);
        assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "N = {n}: {got:?}\n{want:?}");
        assert_eq!(local_memory(&register_sums::ptx_for(n).unwrap()), (0, 0, 0, false), "N = {n}");
    }
}

#[phaser::kernel(target = "sm_90a")]
fn spills(src: &[f32], out: &mut [f32]) {
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

#[test]
fn the_local_memory_check_sees_spills() {
    // The negative control of the test above: 240 live values under a 32-register cap spill.
    let (frame, stores, loads, _) = local_memory(&spills::ptx().unwrap());
    assert!(frame > 0 && stores > 0 && loads > 0, "{frame} {stores} {loads}");
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
        T.tma.load(tile, src, [3, 5], bar);
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
fn swizzled_128b_ring(
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

#[test]
fn tiles_read_what_tma_wrote_with_every_swizzle() {
    let dev = sim();
    let src = dev.upload(&tensor()).unwrap();
    let map = |b: &[u32], s| dev.tensor_map(&src, &[W as u64, H as u64], b, s).unwrap();
    let cfg = |threads| LaunchConfig::linear(1, threads);

    let mut out = dev.alloc::<u32>(160).unwrap();
    row_major_tile::launch(&dev, cfg(32), &map(&[20, 8], Swizzle::None), &mut out, 35, 30).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(35, 30, 8, 20), "row-major, partly outside the tensor");

    let (mut out, mut offs) = (dev.alloc::<u32>(128).unwrap(), dev.alloc::<u32>(128).unwrap());
    swizzled_32b::launch(&dev, cfg(128), &map(&[8, 16], Swizzle::B32), &mut out, &mut offs).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(3, 5, 16, 8), "32-byte swizzle");
    let want: Vec<u32> = (0..128).map(|t| SmemTile::new(4, 16, 8, Swizzle::B32).offset(t / 8, t % 8)).collect();
    assert_eq!(dev.download(&offs).unwrap(), want, "T.tile_addr is SmemTile::offset");

    let (mut out, mut offs) = (dev.alloc::<u32>(512).unwrap(), dev.alloc::<u32>(512).unwrap());
    swizzled_64b_two_boxes::launch(&dev, cfg(512), &map(&[16, 16], Swizzle::B64), &mut out, &mut offs).unwrap();
    assert_eq!(dev.download(&out).unwrap(), window(16, 8, 16, 32), "64-byte swizzle, two boxes");
    let want: Vec<u32> = (0..512).map(|t| SmemTile::new(4, 16, 32, Swizzle::B64).offset(t / 32, t % 32)).collect();
    assert_eq!(dev.download(&offs).unwrap(), want);

    let mut out = dev.alloc::<u32>(512).unwrap();
    let mut copy = dev.upload(&vec![0u32; (W * H) as usize]).unwrap();
    let dst = dev.tensor_map(&copy, &[W as u64, H as u64], &[32, 16], Swizzle::None).unwrap();
    swizzled_128b_ring::launch(&dev, cfg(256), &map(&[32, 8], Swizzle::B128), &dst, &mut out).unwrap();
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

#[test]
fn a_map_that_does_not_match_the_declaration_is_a_launch_error() {
    let dev = sim();
    let src = dev.upload(&tensor()).unwrap();
    let mut out = dev.alloc::<u32>(128).unwrap();
    let mut offs = dev.alloc::<u32>(128).unwrap();
    let wrong = dev.tensor_map(&src, &[W as u64, H as u64], &[8, 16], Swizzle::B64).unwrap();
    let e = swizzled_32b::launch(&dev, LaunchConfig::linear(1, 128), &wrong, &mut out, &mut offs).unwrap_err();
    assert!(matches!(e, RuntimeError::BadArgument { ref param, .. } if param == "src"), "{e}");
    assert!(e.to_string().contains("64-byte swizzle, expected 32-byte swizzle"), "{e}");
    // The dynamic shared memory the tiles need is what the launch got; a smaller explicit size
    // is an error, not a kernel writing past its window.
    let right = dev.tensor_map(&src, &[W as u64, H as u64], &[8, 16], Swizzle::B32).unwrap();
    let small = LaunchConfig::linear(1, 128).with_dynamic_shared(64);
    let e = swizzled_32b::launch(&dev, small, &right, &mut out, &mut offs).unwrap_err();
    assert!(e.to_string().contains("the kernel's tiles need 512"), "{e}");
    assert_eq!(swizzled_32b::kernel().unwrap().declared_dynamic_bytes(), 512);
}

#[test]
fn tile_copies_imply_the_maps_box() {
    // `dst` declares nothing: the tile stored through it sets what the launch checks.
    let k = swizzled_128b_ring::kernel().unwrap();
    let dst = k.params.iter().find(|p| p.name == "dst").unwrap();
    let spec = dst.tma.as_ref().expect("implied by the store");
    assert_eq!((spec.box_dims.clone(), spec.swizzle, spec.declared), (Some(vec![32, 16]), Some(Swizzle::None), false));
}

// ---- build-time checks with the Rust line -----------------------------------------------------

const ZERO: u32 = 0;
const WIDE: u32 = 256;

#[phaser::kernel(target = "sm_90a")]
fn const_count_checked_when_built() {
    let bars = T.alloc_barriers(2);
    T.ptx.mbarrier.init(bars.ptr_to([0]), ZERO);
}

#[phaser::kernel(target = "sm_90a")]
fn const_index_checked_when_built() {
    let bars = T.alloc_barriers(2);
    T.ptx.mbarrier.init(bars.ptr_to([WIDE / 128]), 1);
}

#[phaser::kernel(target = "sm_90a")]
fn too_much_shared(out: &mut [f32]) {
    let a = T.alloc_shared::<f32>([WIDE, WIDE], "128B");
    let b = T.alloc_shared::<f32>([64, 32]);
    out[0] = a[0][0] + b[0][0];
}

#[test]
fn const_items_are_range_checked_at_build_time_with_the_line() {
    let line = |needle: &str| {
        let src = include_str!("dsl_lang.rs");
        src.lines().position(|l| l.contains(needle)).unwrap() + 1
    };
    let e = const_count_checked_when_built::kernel().unwrap_err().to_string();
    assert!(e.contains(&format!("dsl_lang.rs:{}", line("bars.ptr_to([0]), ZERO)"))), "{e}");
    assert!(e.contains("mbarrier arrival count 0 is out of range: must be in 1..=1048575"), "{e}");
    let e = const_index_checked_when_built::kernel().unwrap_err().to_string();
    assert!(e.contains(&format!("dsl_lang.rs:{}", line("ptr_to([WIDE / 128])"))), "{e}");
    assert!(e.contains("barrier index 2 is out of bounds for a barrier array of 2 barriers"), "{e}");
}

#[test]
fn shared_memory_over_the_limit_is_a_build_error_naming_the_allocations() {
    let e = too_much_shared::kernel().unwrap_err().to_string();
    assert!(e.contains("the kernel's shared memory needs"), "{e}");
    assert!(e.contains("but sm_90a allows 232448 bytes (227 KiB) per block"), "{e}");
    assert!(e.contains("`a` 262144 B (tests/dsl_lang.rs:"), "{e}");
    assert!(e.contains("`b` 8192 B (tests/dsl_lang.rs:"), "{e}");
}

#[phaser::kernel(target = "sm_90a")]
fn warp_specialized_registers(out: &mut [u32]) {
    T.require_block(384, 1, 1);
    if T.warpgroup_idx() == 0 {
        T.ptx.setmaxnreg.dec(40);
    } else {
        T.ptx.setmaxnreg.inc(232);
        out[T.thread_idx()] = 1;
    }
}

#[test]
fn setmaxnreg_with_a_declared_block_is_honoured() {
    let ptx = warp_specialized_registers::ptx().unwrap();
    assert!(ptx.contains(".reqntid 384, 1, 1\n.minnctapersm 1"), "{ptx}");
    let log = ptxas::assemble_with(&ptxas::require(), &ptx, "sm_90a", &["-v"]).unwrap();
    assert!(!log.contains("C7508"), "ptxas ignored setmaxnreg:\n{log}");
    // Without the automatic `.minnctapersm 1` ptxas would ignore it: the check bites.
    let bare = ptx.replace(".minnctapersm 1\n", "");
    let log = ptxas::assemble_with(&ptxas::require(), &bare, "sm_90a", &["-v"]).unwrap();
    assert!(log.contains("C7508"), "{log}");
}

/// A `mut` register-array parameter is the caller's array: the helper's writes are the caller's.
#[phaser::device]
fn accumulate(mut acc: Registers<f32, 1>, v: f32) {
    #[unroll]
    for i in 0..4 {
        acc[i] += v * ((i + 1) as f32);
    }
}

#[phaser::kernel(target = "sm_90a")]
fn helper_writes_registers(out: &mut [f32]) {
    let t = T.thread_idx();
    let mut acc = T.registers::<f32>([4]);
    accumulate(acc, t as f32);
    accumulate(acc, 1.0);
    #[unroll]
    for i in 0..4 {
        out[i * 32 + t] = acc[i];
    }
}

#[test]
fn device_functions_write_the_callers_register_array() {
    let dev = sim();
    let mut out = dev.alloc::<f32>(128).unwrap();
    helper_writes_registers::launch(&dev, LaunchConfig::linear(1, 32), &mut out).unwrap();
    let got = dev.download(&out).unwrap();
    for i in 0..4 {
        for t in 0..32 {
            assert_eq!(got[i * 32 + t], (t as f32 + 1.0) * (i + 1) as f32, "element {i} of thread {t}");
        }
    }
}
