//! Bad inputs on the GPU: both backends refuse the same bad inputs the same way, escaped names
//! load and run, a dropped or foreign tensor map is refused before the GPU reads freed or
//! foreign memory, and TMA boxes (every swizzle, out-of-bounds edges) land in shared memory
//! exactly as the simulator and the host reference say. Run by `.ci/gpu-bundle`.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, ProxySpace, Type, Value};
use phaser::codegen::Target;
use phaser::runtime::elem::to_bytes;
use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, Kernel, LaunchConfig, RuntimeError, Swizzle};

fn gpu() -> Device {
    Device::cuda(0).expect("needs a CUDA GPU")
}

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

/// Thread `tid` writes `out[tid] = tid + 1`.
fn iota(name: &str) -> Kernel {
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let v = k.add(tid, Value::u32(1));
    k.st_global(out, tid, v);
    k.finish().unwrap()
}

/// The error text of `f` on `dev` (which must fail).
fn refusal<T>(dev: &Device, f: impl Fn(&Device) -> Result<T, RuntimeError>) -> String {
    match f(dev) {
        Ok(_) => panic!("accepted on the {}", dev.backend()),
        Err(e) => e.to_string(),
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn both_backends_refuse_the_same_inputs_the_same_way() {
    let (g, s) = (gpu(), sim());
    let k = iota("k");
    let mut capped = KernelBuilder::new("capped", Target::Sm90a);
    capped.max_block(64, 1, 1);
    let out = capped.param_global("out", Type::U32, true);
    capped.st_global(out, Value::u32(0), Value::u32(1));
    let capped = capped.finish().unwrap();
    let launch = |kernel: &Kernel, grid: [u32; 3], block: [u32; 3]| {
        let kernel = kernel.clone();
        move |dev: &Device| {
            let out = dev.alloc::<u32>(64)?;
            dev.launch(&kernel, LaunchConfig { grid, block, ..LaunchConfig::linear(1, 1) }, &[Arg::buffer(&out)])
        }
    };
    type Case = Box<dyn Fn(&Device) -> Result<(), RuntimeError>>;
    let cases: Vec<(&str, Case)> = vec![
        ("2^62 f32", Box::new(|d: &Device| d.alloc::<f32>(1 << 62).map(|_| ()))),
        ("block z 65", Box::new(move |d: &Device| launch(&k, [1, 1, 1], [1, 1, 65])(d).map(|_| ()))),
        (
            "grid y 65536",
            Box::new({
                let k = iota("k");
                move |d: &Device| launch(&k, [1, 65536, 1], [1, 1, 1])(d).map(|_| ())
            }),
        ),
        (
            "grid x 2^31",
            Box::new({
                let k = iota("k");
                move |d: &Device| launch(&k, [1 << 31, 1, 1], [1, 1, 1])(d).map(|_| ())
            }),
        ),
        (
            "block [65536, 65536, 1]",
            Box::new({
                let k = iota("k");
                move |d: &Device| launch(&k, [1, 1, 1], [65536, 65536, 1])(d).map(|_| ())
            }),
        ),
        ("above .maxntid", Box::new(move |d: &Device| launch(&capped, [1, 1, 1], [128, 1, 1])(d).map(|_| ()))),
        (
            "a 2^27-byte box",
            Box::new(|d: &Device| {
                let b = d.alloc::<f64>(256 * 256 * 256)?;
                d.tensor_map(&b, &[256, 256, 256], &[256, 256, 256], Swizzle::None).map(|_| ())
            }),
        ),
        (
            "a view past 2^64 bytes",
            Box::new(|d: &Device| {
                let b = d.alloc::<u32>(1024)?;
                d.tensor_map_strided(&b, &[4, 1 << 32], &[1 << 39], &[4, 1], Swizzle::None).map(|_| ())
            }),
        ),
    ];
    for (what, case) in &cases {
        let (on_gpu, on_sim) = (refusal(&g, case), refusal(&s, case));
        assert_eq!(on_gpu, on_sim, "{what}: the two backends disagree");
        eprintln!("{what}: {on_gpu}");
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn escaped_names_load_and_run_on_the_gpu() {
    // The CUDA backend looks the entry up by its escaped PTX symbol.
    let mut k = KernelBuilder::new("naïve kernel", Target::Sm90a);
    let out = k.param_global("r#loop", Type::U32, true);
    let n = k.param("1st value", Type::U32);
    let tile = k.alloc_shared("WARP_SZ", Type::U32, 32);
    let tid = k.thread_idx(Dim::X);
    k.st_shared(tile, tid, n);
    k.probe("tag\n\tst.global.u32 [%rd0], 666;\n//", &[tid]);
    let v = k.ld_shared(tile, tid);
    k.st_global(out, tid, v);
    let k = k.finish().unwrap();
    let dev = gpu();
    let buf = dev.alloc::<u32>(32).unwrap();
    dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&buf), Arg::scalar(5u32)]).unwrap();
    assert_eq!(dev.download(&buf).unwrap(), vec![5; 32]);
}

/// A one-box TMA load into a zeroed dynamic-shared window (`footprint` bytes), copied out
/// word by word; the tx count (the map's box bytes) is a parameter.
fn tma_kernel(rank: u8, footprint: u32) -> Kernel {
    let mut k = KernelBuilder::new("tma_box", Target::Sm90a);
    let map = k.param_tensor_map("map", rank);
    let out = k.param_global("out", Type::U32, true);
    let coords: Vec<Value> = (0..rank).map(|i| k.param(&format!("c{i}"), Type::S32)).collect();
    let tx = k.param("tx", Type::U32);
    let bars = k.alloc_barriers("bar", 1);
    let smem = k.dynamic_shared(Type::U32, 0);
    let tid = k.thread_idx(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    k.for_range_step(tid, Value::u32(footprint / 4), 64, |k, i| k.st_shared(smem, i, Value::u32(0)));
    // The copy engine (async proxy) writes after these generic-proxy stores.
    k.fence_proxy_async(ProxySpace::SharedCta);
    k.cta_sync();
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.mbarrier_arrive_expect_tx(bar, tx);
        let dst = k.shared_base_addr(smem);
        k.tma_load(dst, map, &coords, bar);
    });
    k.cta_sync();
    k.mbarrier_wait(bar, Value::u32(0));
    k.for_range_step(tid, Value::u32(footprint / 4), 64, |k, i| {
        let v = k.ld_shared(smem, i);
        k.st_global(out, i, v);
    });
    k.finish().unwrap()
}

/// The box's shared-memory bytes after a TMA load on `dev` of a `dims` tensor of `u16`
/// (a pattern) with `strides`, `box_dims` and `swizzle`, at `coords`.
fn load_box(
    dev: &Device,
    dims: &[u64],
    strides: &[u64],
    box_dims: &[u32],
    swizzle: Swizzle,
    coords: &[i32],
) -> Vec<u8> {
    let elems = dims.iter().zip(std::iter::once(&2u64).chain(strides)).map(|(d, s)| (d - 1) * s).sum::<u64>() / 2 + 1;
    let data: Vec<u16> = (0..elems).map(|i| (i as u16).wrapping_mul(40503).wrapping_add(7)).collect();
    let buf = dev.upload(&data).unwrap();
    let map = dev.tensor_map_strided(&buf, dims, strides, box_dims, swizzle).unwrap();
    let box_bytes = map.box_bytes();
    // Rows of a swizzled box narrower than the span are a span apart in shared memory.
    let footprint = map.desc().smem_box_bytes().div_ceil(128) * 128;
    let k = tma_kernel(dims.len() as u8, footprint);
    let out = dev.alloc::<u32>(footprint as usize / 4).unwrap();
    let mut args = vec![Arg::TensorMap(&map), Arg::buffer(&out)];
    args.extend(coords.iter().map(|&c| Arg::scalar(c)));
    args.push(Arg::scalar(box_bytes));
    dev.launch(&k, LaunchConfig::linear(1, 64).with_dynamic_shared(footprint.max(1024)), &args).unwrap();
    to_bytes(&dev.download(&out).unwrap())
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_boxes_land_as_the_simulator_says() {
    let (g, s) = (gpu(), sim());
    let mut compared = 0;
    for swizzle in [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128] {
        let span = swizzle.span_bytes().unwrap_or(256) as u64;
        for inner in [8u32, 16, 32, 64] {
            if inner as u64 * 2 > span {
                continue;
            }
            for (dims, strides) in
                [(vec![40u64, 10], vec![96u64]), (vec![24, 7, 3], vec![64, 448]), (vec![100], vec![])]
            {
                let rank = dims.len();
                let box_dims: Vec<u32> = std::iter::once(inner).chain([4u32, 2].into_iter().take(rank - 1)).collect();
                // The inner coordinate a multiple of 8 u16s (16 bytes: the GPU faults otherwise,
                // TMA_INNER_COORD_ALIGN), negative or reaching past the end; the outer ones free.
                let (end, past) = ((dims[0] as i32 - 8) & !7, dims[0] as i32 - 5);
                let at = |inner: i32, outer: i32| -> Vec<i32> {
                    std::iter::once(inner).chain(std::iter::repeat_n(outer, rank - 1)).collect()
                };
                for coords in [at(0, 0), at(-8, -3), at(end, past), at(end, 0)] {
                    let on_gpu = load_box(&g, &dims, &strides, &box_dims, swizzle, &coords);
                    let on_sim = load_box(&s, &dims, &strides, &box_dims, swizzle, &coords);
                    assert_eq!(on_gpu, on_sim, "{swizzle:?} dims {dims:?} box {box_dims:?} at {coords:?}");
                    compared += 1;
                }
            }
        }
    }
    eprintln!("{compared} boxes equal on the GPU and in the simulator");
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_dropped_or_foreign_tensor_map_never_reaches_the_gpu() {
    let (g, s) = (gpu(), sim());
    let mut k = KernelBuilder::new("tmap", Target::Sm90a);
    k.param_tensor_map("map", 2);
    let k = k.finish().unwrap();
    let cfg = LaunchConfig::linear(1, 32);
    // Dropped buffer.
    let buf = g.upload(&vec![1u32; 64 * 8]).unwrap();
    let map = g.tensor_map(&buf, &[64, 8], &[16, 8], Swizzle::None).unwrap();
    g.launch(&k, cfg, &[Arg::TensorMap(&map)]).unwrap();
    drop(buf);
    let e = g.launch(&k, cfg, &[Arg::TensorMap(&map)]).unwrap_err();
    assert!(matches!(e, RuntimeError::DroppedBuffer { .. }), "{e}");
    // A simulator's map on the GPU and the GPU's map in the simulator.
    let sbuf = s.upload(&vec![1u32; 64 * 8]).unwrap();
    let smap = s.tensor_map(&sbuf, &[64, 8], &[16, 8], Swizzle::None).unwrap();
    let e = g.launch(&k, cfg, &[Arg::TensorMap(&smap)]).unwrap_err();
    assert!(matches!(e, RuntimeError::ForeignTensorMap { .. }), "{e}");
    let gbuf = g.upload(&vec![1u32; 64 * 8]).unwrap();
    let gmap = g.tensor_map(&gbuf, &[64, 8], &[16, 8], Swizzle::None).unwrap();
    let e = s.launch(&k, cfg, &[Arg::TensorMap(&gmap)]).unwrap_err();
    assert!(matches!(e, RuntimeError::ForeignTensorMap { .. }), "{e}");
    // The GPU is still healthy (nothing faulted).
    let out = g.alloc::<u32>(32).unwrap();
    g.launch(&iota("after"), cfg, &[Arg::buffer(&out)]).unwrap();
    assert_eq!(g.download(&out).unwrap(), (1..=32).collect::<Vec<u32>>());
}

/// One GPU: every handle of it shares the primary context, so its buffers are
/// interchangeable.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn buffers_are_shared_between_handles_of_one_gpu() {
    let (a, again) = (gpu(), gpu());
    let mine = again.upload(&[1u32, 2, 3]).unwrap();
    assert_eq!(a.download(&mine).unwrap(), [1, 2, 3]);
}

/// The refusal between GPUs. It needs a second GPU (nvidia-h200-x2): `.ci/gpu-run.sh` skips
/// the tests named `two_gpus_*` on a one-GPU machine, and counts them as skipped; run there by
/// hand, it fails rather than pass without having checked anything.
#[test]
#[ignore = "needs two GPUs: run by .ci/gpu-bundle on a machine with two"]
fn two_gpus_buffers_are_tied_to_their_gpu() {
    let a = gpu();
    let b = Device::cuda(1).expect("a second GPU (this test needs two)");
    let theirs = b.upload(&[1u32, 2, 3]).unwrap();
    // Another GPU of the process: a peer, reached only through a peer mapping (`gpu_multi.rs`).
    let e = a.download(&theirs).unwrap_err();
    assert!(matches!(e, RuntimeError::WrongDevice { param: None, .. }), "{e}");
    let e = a.launch(&iota("k"), LaunchConfig::linear(1, 3), &[Arg::buffer(&theirs)]).unwrap_err();
    assert!(matches!(e, RuntimeError::WrongDevice { param: Some(_), .. }), "{e}");
    let tensor = b.upload(&vec![0u32; 64 * 8]).unwrap();
    let map = b.tensor_map(&tensor, &[64, 8], &[16, 8], Swizzle::None).unwrap();
    let mut k = KernelBuilder::new("tmap", Target::Sm90a);
    k.param_tensor_map("map", 2);
    let k = k.finish().unwrap();
    let e = a.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&map)]).unwrap_err();
    assert!(matches!(e, RuntimeError::ForeignTensorMap { .. }), "{e}");
}
