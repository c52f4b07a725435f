//! TMA tensor copies in the simulator: box copy with out-of-bounds zero fill, 128-byte
//! swizzle, multicast-free load + store round trip.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::{Dim, Type, Value};
use phaser_codegen::Target;
use phaser_runtime::sim::SimConfig;
use phaser_runtime::{Arg, Device, LaunchConfig, Swizzle};

/// Load one 2-D box (32 x 8 u32 = 1 KiB) at `(cx, cy)` with TMA, then copy shared memory
/// out to `out` element by element (so the shared layout, swizzle included, is visible).
fn run(swizzle: Swizzle, cx: i32, cy: i32) -> (Vec<u32>, Vec<u32>) {
    launch(swizzle, cx, cy, 0).unwrap()
}

/// The kernel of [`run`], loading into the tile `dst_elem` elements past its 1024-aligned start.
fn launch(
    swizzle: Swizzle,
    cx: i32,
    cy: i32,
    dst_elem: u32,
) -> Result<(Vec<u32>, Vec<u32>), phaser_runtime::RuntimeError> {
    let mut k = KernelBuilder::new("tma_box", Target::Sm90a);
    let map = k.param_tensor_map("map", 2);
    let out = k.param_global("out", Type::U32, true);
    let x = k.param("x", Type::S32);
    let y = k.param("y", Type::S32);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let tile = k.dynamic_shared(Type::U32, 0);
    let tid = k.thread_idx(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.mbarrier_arrive_expect_tx(bar, Value::u32(1024));
        let dst = k.shared_elem_addr(tile, Value::u32(dst_elem));
        k.tma_load(dst, map, &[x, y], bar);
    });
    k.cta_sync();
    k.mbarrier_wait(bar, Value::u32(0));
    k.for_range(Value::u32(0), Value::u32(8), |k, r| {
        let row = k.mul(r, Value::u32(32));
        let i = k.add(row, tid);
        // Read what the copy wrote (the bytes before `dst_elem` are never written).
        let j = k.add(i, Value::u32(dst_elem));
        let v = k.ld_shared(tile, j);
        k.st_global(out, i, v);
    });
    let k = k.finish().unwrap();
    let dev = Device::sim(SimConfig::default());
    // A 40 x 10 tensor of u32 with a padded row pitch of 48 elements.
    let data: Vec<u32> = (0..48 * 10).map(|i| 1000 + i as u32).collect();
    let g = dev.upload(&data).unwrap();
    let out = dev.alloc::<u32>(256).unwrap();
    let tm = dev.tensor_map_strided(&g, &[40, 10], &[48 * 4], &[32, 8], swizzle)?;
    let cfg = LaunchConfig::linear(1, 32).with_dynamic_shared(2048);
    dev.launch(&k, cfg, &[Arg::TensorMap(&tm), Arg::buffer(&out), Arg::scalar(cx), Arg::scalar(cy)])?;
    Ok((dev.download(&out).unwrap(), data))
}

/// The H200 faults (`CUDA_ERROR_MISALIGNED_ADDRESS`) on a TMA tensor load into shared memory
/// that is 16- but not 128-byte aligned; the simulator must report it, not copy the data.
#[test]
fn tma_tensor_load_into_misaligned_shared_memory_is_reported() {
    let err = launch(Swizzle::None, 0, 0, 4).unwrap_err().to_string();
    assert!(err.contains("error[misaligned]"), "{err}");
    assert!(
        err.contains("TMA tensor load's shared destination 0x") && err.contains("is not 128-byte aligned"),
        "{err}"
    );
    assert!(launch(Swizzle::None, 0, 0, 32).is_ok(), "128-byte aligned destinations are fine");
}

#[test]
fn tma_box_copy_fills_out_of_bounds_with_zero() {
    let (got, data) = run(Swizzle::None, 20, 5);
    for r in 0..8usize {
        for c in 0..32usize {
            let (gx, gy) = (20 + c, 5 + r);
            let want = if gx < 40 && gy < 10 { data[gy * 48 + gx] } else { 0 };
            assert_eq!(got[r * 32 + c], want, "box element ({c}, {r})");
        }
    }
}

#[test]
fn tma_128b_swizzle_permutes_16_byte_chunks_by_row() {
    // A 32-element (128-byte) inner box row: chunk j of row r lands at chunk j ^ (r % 8).
    let (plain, _) = run(Swizzle::None, 0, 0);
    let (swz, _) = run(Swizzle::B128, 0, 0);
    for r in 0..8usize {
        for j in 0..8usize {
            for e in 0..4usize {
                let src = r * 32 + j * 4 + e;
                let dst = r * 32 + (j ^ r) * 4 + e;
                assert_eq!(swz[dst], plain[src], "row {r} chunk {j}");
            }
        }
    }
}

/// The H200 faults (`CUDA_ERROR_ILLEGAL_INSTRUCTION`) on a tensor load whose innermost
/// coordinate is not a multiple of 16 bytes, whatever the outer ones are
/// (`TMA_INNER_COORD_ALIGN`, bench/gpu-runs.md): u32 columns 30, 35, -3 and 1 are reported;
/// 20, 36, -4 and 32 (out of bounds and negative boxes included) run.
#[test]
fn tma_tensor_load_at_a_misaligned_inner_coordinate_is_reported() {
    for (cx, cy) in [(30, 0), (35, 5), (-3, -3), (1, 9)] {
        let err = launch(Swizzle::None, cx, cy, 0).unwrap_err().to_string();
        assert!(err.contains("error[misaligned] kernel `tma_box`"), "{err}");
        let bytes = cx * 4;
        let want = format!("TMA tensor load: the innermost tensor coordinate {cx} (of u32, 4 bytes each) is {bytes} bytes, not a multiple of 16: the GPU faults (CUDA_ERROR_ILLEGAL_INSTRUCTION");
        assert!(err.contains(&want), "{err}");
    }
    for (cx, cy) in [(20, 0), (36, 5), (-4, -3), (32, 9)] {
        assert!(launch(Swizzle::None, cx, cy, 0).is_ok(), "({cx}, {cy}) is aligned");
    }
}

/// A tensor store or prefetch at column `x` of a 64 x 8 u32 tensor (box 16 x 8): the
/// coordinate rule was measured on loads; stores and prefetches share the copy engine and are
/// held to it too.
fn store_or_prefetch(store: bool, x: i32) -> Result<(), phaser_runtime::RuntimeError> {
    let mut k = KernelBuilder::new(if store { "tma_store_at" } else { "tma_prefetch_at" }, Target::Sm90a);
    let map = k.param_tensor_map("map", 2);
    let x_param = k.param("x", Type::S32);
    k.require_block(32, 1, 1);
    let tile = k.dynamic_shared(Type::U32, 0);
    let tid = k.thread_idx(Dim::X);
    k.for_range_step(tid, Value::u32(128), 32, |k, i| k.st_shared(tile, i, Value::u32(7)));
    k.fence_proxy_async(phaser_codegen::ir::ProxySpace::SharedCta);
    k.cta_sync();
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        if store {
            let src = k.shared_base_addr(tile);
            k.tma_store(map, &[x_param, Value::s32(0)], src);
            k.bulk_commit_group();
            k.bulk_wait_group(0, false);
        } else {
            k.tma_prefetch(map, &[x_param, Value::s32(0)]);
        }
    });
    let k = k.finish().unwrap();
    let dev = Device::sim(SimConfig::default());
    let g = dev.upload(&vec![0u32; 64 * 8]).unwrap();
    let tm = dev.tensor_map(&g, &[64, 8], &[16, 8], Swizzle::None)?;
    let cfg = LaunchConfig::linear(1, 32).with_dynamic_shared(1024);
    dev.launch(&k, cfg, &[Arg::TensorMap(&tm), Arg::scalar(x)]).map(|_| ())
}

#[test]
fn tma_tensor_stores_and_prefetches_follow_the_loads_coordinate_rule() {
    for store in [true, false] {
        let what = if store { "TMA tensor store" } else { "TMA tensor prefetch" };
        let err = store_or_prefetch(store, 6).unwrap_err().to_string();
        assert!(err.contains("error[misaligned]"), "{err}");
        assert!(
            err.contains(&format!("{what} (rule measured on loads): the innermost tensor coordinate 6 (of u32")),
            "{err}"
        );
        assert!(store_or_prefetch(store, 8).is_ok(), "{what} at an aligned column");
        assert!(store_or_prefetch(store, -4).is_ok(), "{what} at an aligned negative column");
    }
}

/// A swizzled box narrower than its swizzle span: 4 rows of 4 u32 (16 bytes) with 32-byte
/// swizzling. On the H200 each row took a whole 32-byte span in shared memory (the second
/// half untouched) while the copy counted 64 bytes of tx; the simulator lands it the same way.
#[test]
fn a_swizzled_box_narrower_than_its_span_lands_one_row_per_span() {
    let mut k = KernelBuilder::new("narrow_box", Target::Sm90a);
    let map = k.param_tensor_map("map", 2);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let tile = k.dynamic_shared(Type::U32, 0);
    let tid = k.thread_idx(Dim::X);
    k.st_shared(tile, tid, Value::u32(0xdead));
    k.fence_proxy_async(phaser_codegen::ir::ProxySpace::SharedCta);
    k.cta_sync();
    let bar = k.barrier_at(bars, Value::u32(0));
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        // The tx of the box's 64 bytes, not of its 128-byte footprint.
        k.mbarrier_arrive_expect_tx(bar, Value::u32(64));
        let dst = k.shared_base_addr(tile);
        k.tma_load(dst, map, &[Value::s32(4), Value::s32(1)], bar);
    });
    k.cta_sync();
    k.mbarrier_wait(bar, Value::u32(0));
    let v = k.ld_shared(tile, tid);
    k.st_global(out, tid, v);
    let k = k.finish().unwrap();
    let dev = Device::sim(SimConfig::default());
    let data: Vec<u32> = (0..16 * 8).map(|i| i as u32).collect();
    let g = dev.upload(&data).unwrap();
    let out = dev.alloc::<u32>(32).unwrap();
    let tm = dev.tensor_map(&g, &[16, 8], &[4, 4], Swizzle::B32).unwrap();
    assert_eq!((tm.desc().box_bytes(), tm.desc().smem_box_bytes()), (64, 128));
    let cfg = LaunchConfig::linear(1, 32).with_dynamic_shared(1024);
    dev.launch(&k, cfg, &[Arg::TensorMap(&tm), Arg::buffer(&out)]).unwrap();
    let got = dev.download(&out).unwrap();
    for r in 0..4u32 {
        let row: Vec<u32> = (0..4).map(|c| (r + 1) * 16 + 4 + c).collect();
        // Rows 0..3 of a 32-byte swizzle lie below its first XOR bit (128 bytes): unpermuted.
        assert_eq!(got[(r * 8) as usize..(r * 8 + 4) as usize], row[..], "row {r} at its span");
        assert_eq!(got[(r * 8 + 4) as usize..(r * 8 + 8) as usize], [0xdead; 4], "row {r}'s padding untouched");
    }
}
