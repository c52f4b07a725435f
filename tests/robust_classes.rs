//! One test per class of bad input with its smallest reproduction: each is refused
//! with an error naming the value (and, in the builder, the Rust line), never a wrong answer,
//! a panic or a hang. The property tests over the same boundaries are `robust_props.rs`.

use phaser::codegen::builder::{KernelBuilder, PipelineState};
use phaser::codegen::ir::{Dim, Stmt, StmtKind, Type, Value};
use phaser::codegen::{emit_kernel, ptxas, Target};
use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig, RuntimeError, Swizzle};

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

/// Thread `tid` writes `out[tid] = tid + 1`.
fn iota_kernel(name: &str) -> phaser::Kernel {
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let v = k.add(tid, Value::u32(1));
    k.st_global(out, tid, v);
    k.finish().unwrap()
}

/// The build error of a kernel the builder `f` makes (which must fail).
fn build_error(f: impl FnOnce(&mut KernelBuilder)) -> String {
    let mut k = KernelBuilder::new("bad", Target::Sm90a);
    f(&mut k);
    k.finish().expect_err("the kernel must be refused").to_string()
}

// ---- integer overflow in sizes and extents ------------------------------------------------

#[test]
fn a_buffer_whose_byte_count_overflows_is_refused() {
    let e = sim().alloc::<f32>(1 << 62).unwrap_err();
    assert!(matches!(e, RuntimeError::BufferTooLarge { len: 4611686018427387904, elem: Type::F32, size: 4 }), "{e}");
    assert_eq!(
        e.to_string(),
        "a buffer of 4611686018427387904 f32 elements does not fit in memory: 4611686018427387904 x 4 bytes \
         overflows the address space"
    );
    // Just below the overflow it is the simulator's memory limit that refuses, by name.
    let e = sim().alloc::<f32>((1 << 62) - 1).unwrap_err();
    assert!(matches!(e, RuntimeError::SimulatorLimit(_)), "{e}");
}

#[test]
fn a_tensor_map_box_of_more_bytes_than_a_phase_counts_is_refused() {
    // 256^3 f64 = 2^27 bytes: once accepted, then a panic in the simulator's copy agent.
    let dev = sim();
    let buf = dev.alloc::<f64>(256 * 256 * 256).unwrap();
    let e = dev.tensor_map(&buf, &[256, 256, 256], &[256, 256, 256], Swizzle::None).unwrap_err().to_string();
    assert_eq!(
        e,
        "tensor map: the box [256, 256, 256] of f64 is 134217728 bytes, more than the 1048575 bytes one mbarrier \
         phase can count (and than any shared memory)"
    );
    // Five dimensions of 256 f64 would overflow a u32 byte count (2^43): still a clear error.
    let e = dev.tensor_map(&buf, &[256, 256, 256, 1, 1], &[256; 5], Swizzle::None).unwrap_err().to_string();
    assert!(e.contains("is 8796093022208 bytes"), "{e}");
}

#[test]
fn a_strided_view_whose_extent_wraps_is_refused() {
    // 2^32 rows of 2^39 bytes end near 2^71 bytes: saturating u64 arithmetic plus one
    // element wrapped to a small extent, and the view then read another buffer's data.
    let dev = sim();
    let buf = dev.alloc::<u32>(1024).unwrap();
    let e = dev.tensor_map_strided(&buf, &[4, 1 << 32], &[1 << 39], &[4, 1], Swizzle::None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor map: the view [4, 4294967296] (strides [549755813888]) of u32 reaches 2361183240885066792976 bytes \
         but the buffer holds 4096"
    );
}

#[test]
fn a_block_whose_thread_count_wraps_is_refused() {
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [65536, 65536, 1], ..LaunchConfig::linear(1, 1) };
    assert_eq!(cfg.threads_per_block(), u32::MAX, "saturates, never 0");
    let dev = sim();
    let out = dev.alloc::<u32>(1).unwrap();
    let e = dev.launch(&iota_kernel("k"), cfg, &[Arg::buffer(&out)]).unwrap_err();
    assert_eq!(e.to_string(), "kernel `k`: launch configuration: 4294967296 threads per block exceed 1024");
}

#[test]
fn a_64_bit_arrival_count_is_range_checked_as_given() {
    // (1 << 32) + 1 was truncated to 1 before the mbarrier range check saw it.
    let e = build_error(|k| {
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, Value::u64((1 << 32) + 1));
    });
    assert!(e.contains("robust_classes.rs:"), "the Rust line: {e}");
    assert!(e.ends_with("arrival count 4294967297 does not fit in u32"), "{e}");
    // A constant never silently changes type either: `u32 + 2^32` is refused.
    let e = build_error(|k| {
        let x = k.param("x", Type::U32);
        let y = k.add(x, Value::u64(1 << 32));
        k.probe("y", &[y]);
    });
    assert!(e.ends_with("the constant 4294967296 in + does not fit in u32"), "{e}");
}

#[test]
fn sizes_derived_from_roles_and_pipelines_saturate_instead_of_wrapping() {
    use phaser::codegen::builder::{Arrivals, PipelineConfig, WarpgroupRoles};
    // 2^16 x 2^16 consumer arrivals wrapped to 0 before; now past the mbarrier limit, refused.
    let cfg = PipelineConfig {
        stages: 2,
        producers: Arrivals::Threads(1),
        consumers: Arrivals::Threads(1 << 16),
        consumer_ctas: 1 << 16,
    };
    assert_eq!(cfg.empty_count(), u32::MAX);
    let e = build_error(|k| {
        k.pipeline("p", cfg);
    });
    assert!(e.contains("an arrival count exceeds the mbarrier limit of 1048575"), "{e}");
    // 13 producer warpgroups of 40 registers exceed the SM: a subtraction underflowed (a panic).
    let roles = WarpgroupRoles::rebalanced(13, 1);
    assert_eq!(roles.threads(), 14 * 128);
    let e = build_error(|k| {
        k.require_block(1024, 1, 1);
        k.warpgroup_roles(roles, |_| {}, |_, _| {});
    });
    assert!(e.contains("setmaxnreg role split of 1792 threads"), "{e}");
    // Advancing a pipeline state by u32::MAX emits at most 2 x stages advances' worth of code.
    let mut k = KernelBuilder::new("adv", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let st = PipelineState::new(&mut k, 3, 0);
    st.advance_by(&mut k, u32::MAX);
    k.st_global(out, Value::u32(0), st.index());
    k.st_global(out, Value::u32(1), st.phase());
    let k = k.finish().unwrap();
    let dev = sim();
    let buf = dev.alloc::<u32>(2).unwrap();
    dev.launch(&k, LaunchConfig::linear(1, 1), &[Arg::buffer(&buf)]).unwrap();
    // 4294967295 advances of a 3-stage ring: index 4294967295 mod 3 = 0, phase flipped
    // 4294967295 / 3 = 1431655765 times (odd): 1.
    assert_eq!(dev.download(&buf).unwrap(), [0, 1]);
}

#[phaser::kernel(target = "sm_90a")]
fn comptime_sized(out: &mut [f32], #[comptime] N: u32) {
    let tile = T.alloc_shared::<f32>([N * 1024]);
    tile[0] = 1.0;
    out[0] = tile[0];
}

#[test]
fn compile_time_arithmetic_is_checked() {
    // `N * 1024` wrapped before ((2^22 + 1) * 1024 = 2^32 + 1024 became 1024): an array that
    // silently was not the size asked for.
    let e = comptime_sized::kernel_for((1 << 22) + 1).unwrap_err().to_string();
    assert!(e.contains("the compile-time value 4194305 * 1024 overflows u32"), "{e}");
    assert!(e.contains("robust_classes.rs:"), "at the user's line: {e}");
    let e = comptime_sized::kernel_for(0).unwrap_err().to_string();
    assert!(e.contains("shared array `tile` has length 0"), "{e}");
    let k = comptime_sized::kernel_for(2).unwrap();
    assert_eq!(k.shared()[0].len, 2 * 1024, "in range: the size asked for");
}

#[test]
fn loop_steps_and_stage_spans_that_cannot_be_represented_are_refused() {
    let e = build_error(|k| {
        let n = k.param("n", Type::U16);
        k.for_range_step(Value::imm_u(0, Type::U16), n, 70_000, |_, _| {});
    });
    assert!(e.ends_with("the constant 70000 in a loop step does not fit in u16"), "{e}");
    let e = build_error(|k| {
        let st = PipelineState::new(k, 4, 0);
        let base = k.param("base", Type::U32);
        let a = st.stage_addr(k, base, 1 << 30);
        k.probe("a", &[a]);
    });
    assert!(
        e.ends_with(
            "4 stages of 1073741824 bytes span 4294967296 bytes, more than sm_90a's 232448 bytes of shared memory"
        ),
        "{e}"
    );
}

// ---- buffer identity and lifetime ------------------------------------------------------------

#[test]
fn a_tensor_map_of_another_simulator_is_refused() {
    let (a, b) = (sim(), sim());
    let theirs = b.upload(&vec![1u32; 64 * 8]).unwrap();
    let map = b.tensor_map(&theirs, &[64, 8], &[16, 8], Swizzle::None).unwrap();
    let mut k = KernelBuilder::new("tmap", Target::Sm90a);
    k.param_tensor_map("map", 2);
    let k = k.finish().unwrap();
    let e = a.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&map)]).unwrap_err();
    assert!(matches!(e, RuntimeError::ForeignTensorMap { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "the tensor map for `map` was made by another device (a simulator), not this simulator; make it with this \
         device's `tensor_map`"
    );
    b.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&map)]).unwrap();
}

/// A map's rank is the `.Nd` of the kernel's TMA copies: a map of another rank is refused
/// at launch with the parameter named, also where the boxes agree up to trailing 1s (a
/// rank-3 map of box `{64, 8, 1}` for the rank-2 tiles), on both backends' shared check.
#[test]
fn a_tensor_map_of_another_rank_is_refused_at_launch() {
    let dev = sim();
    let buf = dev.upload(&vec![1u32; 64 * 8 * 2]).unwrap();
    let mut k = KernelBuilder::new("tmap", Target::Sm90a);
    k.param_tensor_map("map", 2);
    let k = k.finish().unwrap();
    let rank3 = dev.tensor_map(&buf, &[64, 8, 2], &[16, 8, 1], Swizzle::None).unwrap();
    let e = dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&rank3)]).unwrap_err();
    assert!(matches!(e, RuntimeError::BadArgument { index: 0, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "kernel `tmap`: argument 0 (`map`): a rank-3 tensor map, but the kernel's TMA copies through `map` are rank 2 \
         (`cp.async.bulk.tensor.2d`); build the map with 2 dimensions"
    );
    let rank1 = dev.tensor_map(&buf, &[1024], &[16], Swizzle::None).unwrap();
    let e = dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&rank1)]).unwrap_err();
    assert!(e.to_string().contains("a rank-1 tensor map"), "{e}");
    // The same map of rank 2 is accepted.
    let rank2 = dev.tensor_map(&buf, &[64, 16], &[16, 8], Swizzle::None).unwrap();
    dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&rank2)]).unwrap();
}

#[test]
fn a_tensor_map_that_outlives_its_buffer_is_refused() {
    let dev = sim();
    let buf = dev.upload(&vec![7u32; 64 * 8]).unwrap();
    let map = dev.tensor_map(&buf, &[64, 8], &[16, 8], Swizzle::None).unwrap();
    assert!(map.buffer_alive());
    let mut k = KernelBuilder::new("tmap", Target::Sm90a);
    k.param_tensor_map("map", 2);
    let k = k.finish().unwrap();
    drop(buf);
    assert!(!map.buffer_alive());
    // A new buffer of the same size does not take the old one's place.
    let _other = dev.upload(&vec![9u32; 64 * 8]).unwrap();
    let e = dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::TensorMap(&map)]).unwrap_err();
    assert!(matches!(e, RuntimeError::DroppedBuffer { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "the tensor map for `map` views a buffer that was dropped; keep the buffer alive while its tensor maps are used"
    );
}

#[test]
fn dropped_buffers_are_freed_in_the_simulator() {
    // 48 buffers of 64 MiB (3 GiB in all) under a 1 GiB memory limit: each is freed on drop.
    let dev = Device::sim(SimConfig { max_memory_bytes: 1 << 30, ..SimConfig::default() });
    for i in 0..48 {
        let mut buf = dev.alloc::<u32>(16 << 20).unwrap_or_else(|e| panic!("buffer {i}: {e}"));
        assert_eq!(buf.bytes(), 64 << 20);
        if i % 16 == 0 {
            dev.fill(&mut buf, i).unwrap();
        }
    }
    // And what is alive still counts: 17 live buffers of 64 MiB exceed 1 GiB.
    let live: Result<Vec<_>, _> = (0..17).map(|_| dev.alloc::<u32>(16 << 20)).collect();
    assert!(matches!(live, Err(RuntimeError::SimulatorLimit(_))));
}

// ---- limits per target and per dimension ------------------------------------------------------

#[test]
fn launch_shapes_beyond_the_target_limits_are_refused() {
    let dev = sim();
    let out = dev.alloc::<u32>(64).unwrap();
    let k = iota_kernel("k");
    let problem = |grid: [u32; 3], block: [u32; 3]| {
        dev.launch(&k, LaunchConfig { grid, block, ..LaunchConfig::linear(1, 1) }, &[Arg::buffer(&out)])
            .unwrap_err()
            .to_string()
    };
    assert!(problem([1, 1, 1], [1, 1, 65]).ends_with("block [1, 1, 65]: dimension 2 exceeds 64 (sm_90a limit)"));
    assert!(problem([1, 65536, 1], [1, 1, 1]).ends_with("grid [1, 65536, 1]: dimension 1 exceeds 65535 (sm_90a limit)"));
    assert!(problem([1, 1, 65536], [1, 1, 1]).ends_with("dimension 2 exceeds 65535 (sm_90a limit)"));
    assert!(problem([1 << 31, 1, 1], [1, 1, 1]).ends_with("dimension 0 exceeds 2147483647 (sm_90a limit)"));
}

#[test]
fn a_grid_the_simulator_cannot_finish_is_refused_at_once() {
    // 2^31 - 1 CTAs are within the GPU's limits but would run for hours in the simulator.
    let dev = sim();
    let out = dev.alloc::<u32>(1).unwrap();
    let t = std::time::Instant::now();
    let e = dev.launch(&iota_kernel("k"), LaunchConfig::linear((1 << 31) - 1, 32), &[Arg::buffer(&out)]).unwrap_err();
    assert!(matches!(e, RuntimeError::SimulatorLimit(_)), "{e}");
    assert!(e.to_string().starts_with("the launch has 68719476704 threads"), "{e}");
    assert!(t.elapsed().as_secs() < 5, "refused before running");
}

#[test]
fn launch_bounds_are_checked_where_they_are_declared() {
    let line = line!() + 2;
    let e = build_error(|k| {
        k.max_block(0, 1, 1);
    });
    assert!(e.contains(&format!("robust_classes.rs:{line}:")), "{e}");
    assert!(
        e.ends_with(
            "maximum block shape (.maxntid) [0, 1, 1] has a zero dimension; every dimension must be at least 1"
        ),
        "{e}"
    );
    let e = build_error(|k| {
        k.max_registers(0);
    });
    assert!(e.ends_with("a register limit of 0 per thread is out of range: must be in 1..=255"), "{e}");
    let e = build_error(|k| {
        k.max_registers(256);
    });
    assert!(e.ends_with("a register limit of 256 per thread is out of range: must be in 1..=255"), "{e}");
    let e = build_error(|k| {
        k.min_blocks_per_sm(0);
    });
    assert!(e.ends_with("a minimum of 0 blocks per SM is out of range: must be in 1..=32"), "{e}");
    let e = build_error(|k| {
        k.max_block(2048, 1, 1);
    });
    assert!(e.ends_with("dimension 0 exceeds 1024"), "{e}");
    // A launch above `.maxntid` is refused by the launch check, as the GPU would.
    let mut k = KernelBuilder::new("capped", Target::Sm90a);
    k.max_block(64, 1, 1);
    let out = k.param_global("out", Type::U32, true);
    k.st_global(out, Value::u32(0), Value::u32(1));
    let k = k.finish().unwrap();
    let dev = sim();
    let buf = dev.alloc::<u32>(1).unwrap();
    let e = dev.launch(&k, LaunchConfig::linear(1, 128), &[Arg::buffer(&buf)]).unwrap_err().to_string();
    assert!(
        e.ends_with("128 threads per block exceed the kernel's maximum block [64, 1, 1] (.maxntid, 64 threads)"),
        "{e}"
    );
}

#[test]
fn an_exact_and_a_maximum_block_shape_together_are_refused() {
    // Found by the generated-kernel property (`robust_props.rs`): ptxas rejects the kernel
    // ("Conflicting directives: .maxntid and .reqntid cannot both be specified").
    let mut k = KernelBuilder::new("both", Target::Sm90a);
    k.require_block(128, 1, 1);
    k.max_block(128, 1, 1);
    let out = k.param_global("out", Type::U32, true);
    k.st_global(out, Value::u32(0), Value::u32(1));
    let e = k.finish().unwrap_err().to_string();
    assert!(e.ends_with("a kernel declares an exact block shape (.reqntid) or a maximum (.maxntid), not both"), "{e}");
}

#[test]
fn shared_allocations_report_their_real_size_and_alignment() {
    // 2^29 f32 = 2 GiB: reported as 0 bytes before (a u32 product).
    let line = line!() + 2;
    let e = build_error(|k| {
        k.alloc_shared("huge", Type::F32, 1 << 29);
    });
    assert!(e.contains(&format!("robust_classes.rs:{line}:")), "{e}");
    assert!(e.contains("shared array `huge` (2147483648 bytes at offset 0) ends at byte 2147483648"), "{e}");
    // An alignment of 2^31 made ptxas hang; the largest is the target's shared window.
    let e = build_error(|k| {
        k.alloc_shared_aligned("a", Type::F32, 4, 1 << 31);
    });
    assert!(e.ends_with("shared array `a`: alignment 2147483648 must be a power of two in 1..=131072"), "{e}");
    let e = build_error(|k| {
        k.alloc_shared_aligned("a", Type::F32, 4, 3 << 4);
    });
    assert!(e.ends_with("alignment 48 must be a power of two in 1..=131072"), "{e}");
}

// ---- PTX text injection and invalid identifiers ----------------------------------------------

#[test]
fn user_text_cannot_inject_ptx_and_odd_names_are_escaped() {
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
    let ptx = emit_kernel(&k).unwrap();
    // The probe tag stays inside its comment: no instruction of the PTX is the injected store.
    assert!(!phaser::codegen::ptx_text::has(&ptx, "st.global.u32 _, 666"), "{ptx}");
    assert!(ptx.contains("// probe \"tag\\n\\tst.global.u32 [%rd0], 666;\\n//\": %r"), "{ptx}");
    // Names are PTX identifiers, with the mapping shown.
    for line in [
        "// entry \"na\\u{ef}ve kernel\" -> na$C3$AFve$20kernel",
        "// param 0 \"r#loop\" -> param_r$23loop",
        "// param 1 \"1st value\" -> param_1st$20value",
        ".visible .entry na$C3$AFve$20kernel(",
    ] {
        assert!(ptx.contains(line), "missing `{line}`:\n{ptx}");
    }
    // The driver's PTX JIT rejects any non-ASCII byte, comments included.
    assert!(ptx.is_ascii(), "{ptx}");
    ptxas::assemble(&ptxas::require(), &ptx, "sm_90a").unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    // The simulator runs the same kernel (and ignores the probe's text).
    let dev = sim();
    let buf = dev.alloc::<u32>(32).unwrap();
    dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&buf), Arg::scalar(5u32)]).unwrap();
    assert_eq!(dev.download(&buf).unwrap(), vec![5; 32]);
}

#[phaser::kernel(target = "sm_90a")]
fn r#loop(r#in: &[u32], r#out: &mut [u32]) {
    let tid = T.thread_idx();
    r#out[tid] = r#in[tid] * 2;
}

#[test]
fn raw_identifiers_name_kernels_as_rust_reads_them() {
    assert_eq!(r#loop::NAME, "loop");
    let ptx = r#loop::ptx().unwrap();
    assert!(ptx.contains(".visible .entry loop(") && ptx.contains("param_in") && ptx.contains("param_out"), "{ptx}");
    ptxas::assemble(&ptxas::require(), &ptx, "sm_90a").unwrap();
    let dev = sim();
    let input = dev.upload(&[1u32, 2, 3, 4]).unwrap();
    let mut out = dev.alloc::<u32>(4).unwrap();
    r#loop::launch(&dev, LaunchConfig::linear(1, 4), &input, &mut out).unwrap();
    assert_eq!(dev.download(&out).unwrap(), [2, 4, 6, 8]);
}

// ---- crashes instead of errors -----------------------------------------------------------------

#[phaser::device]
fn ping(x: u32) -> u32 {
    pong(x) + 1
}

#[phaser::device]
fn pong(x: u32) -> u32 {
    ping(x) * 2
}

#[phaser::kernel(target = "sm_90a")]
fn recursive(out: &mut [u32]) {
    out[0] = ping(1);
}

#[test]
fn recursive_device_functions_are_a_build_error_naming_the_cycle() {
    let e = recursive::kernel().unwrap_err().to_string();
    assert!(
        e.contains(
            "device function `robust_classes::ping` calls itself (robust_classes::ping -> robust_classes::pong -> \
             robust_classes::ping): device functions are inlined, so recursion cannot be expanded; rewrite it as a loop"
        ),
        "{e}"
    );
    assert!(e.contains("robust_classes.rs:"), "at the call's line: {e}");
}

#[test]
fn control_flow_nested_thirty_thousand_deep_is_refused() {
    // The builder stops descending at the limit, so the user's recursion below ends too.
    fn nest(k: &mut KernelBuilder, depth: u32, c: Value) {
        if depth > 0 {
            k.if_then(c, |k| nest(k, depth - 1, c));
        }
    }
    let e = build_error(|k| {
        let x = k.param("x", Type::U32);
        let c = k.ne(x, Value::u32(0));
        nest(k, 30_000, c);
    });
    assert!(e.ends_with("control flow nests deeper than 256 levels here; flatten the conditions"), "{e}");
    // IR nested that deep by hand (not through the builder) is refused before any recursive
    // pass (check, printer, simulator) walks it.
    let mut k = KernelBuilder::new("deep", Target::Sm90a);
    k.param("x", Type::U32);
    let mut k = k.finish().unwrap().into_parts();
    let mut body: Vec<Stmt> = Vec::new();
    for _ in 0..30_000 {
        body = vec![Stmt::new(StmtKind::If { cond: Value::pred(true), then_body: body, else_body: Vec::new() }, None)];
    }
    k.body = body;
    let k = k.finish_unchecked();
    let e = emit_kernel(&k).unwrap_err().to_string();
    assert_eq!(e, "error: kernel `deep`: control flow is nested 30000 levels deep; at most 256 levels are supported");
    let e = k.ptx().unwrap_err().to_string();
    assert!(e.contains("nested 30000 levels deep"), "{e}");
    let dev = sim();
    let e = dev.launch(&k, LaunchConfig::linear(1, 1), &[Arg::scalar(1u32)]).unwrap_err().to_string();
    assert!(e.contains("nested 30000 levels deep"), "{e}");
    // Dropping it is recursive in Rust's generated drop glue: take it apart iteratively.
    let mut pending = k.into_parts().body;
    while let Some(s) = pending.pop() {
        if let StmtKind::If { then_body, else_body, .. } = s.kind {
            pending.extend(then_body);
            pending.extend(else_body);
        }
    }
}

#[test]
fn the_deepest_nesting_allowed_builds_assembles_and_runs() {
    fn nest(k: &mut KernelBuilder, depth: u32, c: Value, out: phaser::codegen::builder::GlobalPtr) {
        if depth == 0 {
            k.st_global(out, Value::u32(0), Value::u32(1));
        } else {
            k.if_then(c, |k| nest(k, depth - 1, c, out));
        }
    }
    let mut k = KernelBuilder::new("deepest", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let x = k.param("x", Type::U32);
    let c = k.ne(x, Value::u32(0));
    nest(&mut k, 256, c, out);
    let k = k.finish().unwrap();
    let ptx = emit_kernel(&k).unwrap();
    ptxas::assemble(&ptxas::require(), &ptx, "sm_90a").unwrap();
    let dev = sim();
    let buf = dev.alloc::<u32>(1).unwrap();
    dev.launch(&k, LaunchConfig::linear(1, 1), &[Arg::buffer(&buf), Arg::scalar(1u32)]).unwrap();
    assert_eq!(dev.download(&buf).unwrap(), [1]);
}

#[test]
fn a_buffer_of_a_dropped_device_names_its_argument() {
    let k = iota_kernel("iota");
    let gone = Device::sim(SimConfig::default());
    let buf = gone.alloc::<u32>(32).unwrap();
    drop(gone);
    let e = sim().launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&buf)]).unwrap_err();
    assert!(matches!(&e, RuntimeError::ForeignBuffer { param: Some(p), .. } if p == "out"), "{e}");
    assert_eq!(
        e.to_string(),
        "the buffer passed as `out` belongs to another simulator device (or to one that was dropped)"
    );
}

#[test]
fn a_non_coherent_load_of_a_writable_buffer_is_refused() {
    use phaser::codegen::builder::ArrayRef;
    // The op table says nothing in the kernel may write a buffer read by `ld.nc`.
    let e = build_error(|k| {
        let buf = k.param_global("buf", Type::F32, true);
        let v = k.ld_vec(ArrayRef::Global(buf), Value::u32(0), 1, true)[0];
        k.st_global(buf, Value::u32(1), v);
    });
    assert!(e.contains("`ld.nc` reads through the read-only data cache, but the buffer is `&mut [T]`"), "{e}");
    let mut k = KernelBuilder::new("ok", Target::Sm90a);
    let src = k.param_global("src", Type::F32, false);
    let out = k.param_global("out", Type::F32, true);
    let v = k.ld_vec(ArrayRef::Global(src), Value::u32(0), 1, true)[0];
    k.st_global(out, Value::u32(0), v);
    k.finish().unwrap();
}
