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
