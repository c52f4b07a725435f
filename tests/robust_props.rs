//! Property tests at every boundary that takes user numbers: buffer allocation,
//! tensor-map encoding, launch configurations, shared allocations, barrier counts and tx
//! bytes, and kernels generated from the op registry. Each generated input is judged by an
//! independent validity predicate written here from the documented rules (CUDA driver API,
//! PTX ISA, the target's limits): it must be refused with an error exactly when the predicate
//! says it is invalid, and when accepted the simulator's result must equal a reference
//! computed on the host. A panic, a wrong result or a refusal the predicate does not expect
//! fails the test with the shrunk input.
//!
//! Seeds are fixed (ChaCha, one per area), so every run tries the same inputs and the counts
//! in `bench/robustness.md` are reproducible: each area checks its row there
//! (`UPDATE_ROBUSTNESS=1 cargo test --test robust_props` rewrites them).

use phaser::codegen::builder::{ArriveOpts, KernelBuilder};
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::codegen::registry::{self, OpDef, Variant};
use phaser::codegen::{emit_module, ptxas, EmitOptions, Kernel, Module, Target};
use phaser::runtime::elem::{from_bytes, to_bytes, Elem};
use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig, RuntimeError, Swizzle};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use std::cell::RefCell;
use std::sync::Mutex;

// ---- the tally and the table -------------------------------------------------------------------

/// What became of the inputs of one area.
#[derive(Default, Debug)]
struct Tally {
    tried: u32,
    /// Refused with an error, as the predicate expects.
    refused: u32,
    /// Accepted, as the predicate expects, and the simulator's result equals the reference.
    verified: u32,
    /// Accepted, as expected, and checked without a simulation (too large to simulate in CI).
    accepted_unrun: u32,
}

/// How an input ended (anything else is a failure of the property).
enum Outcome {
    Refused,
    Verified,
    AcceptedUnrun,
}

/// Run `cases` inputs of `strategy` through `check` with a fixed seed; count the outcomes and
/// compare them with the area's row of `bench/robustness.md`.
fn run_area<S: Strategy>(
    area: &str,
    seed: u64,
    cases: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<Outcome, TestCaseError>,
) -> Tally
where
    S::Value: std::fmt::Debug,
{
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 2048,
        ..Config::default()
    };
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |input| {
        let outcome = check(input)?;
        let mut t = tally.borrow_mut();
        t.tried += 1;
        match outcome {
            Outcome::Refused => t.refused += 1,
            Outcome::Verified => t.verified += 1,
            Outcome::AcceptedUnrun => t.accepted_unrun += 1,
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{area}: {e}");
    }
    // Shrinking never ran (no failure), so the tally counts exactly the generated cases.
    let tally = tally.into_inner();
    assert_eq!(tally.tried, cases, "{area}: every case counted once");
    check_table_row(area, &tally);
    tally
}

static TABLE: Mutex<()> = Mutex::new(());

/// The area's row in `bench/robustness.md` must state these counts (they are deterministic).
fn check_table_row(area: &str, t: &Tally) {
    let _guard = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/robustness.md");
    let text = std::fs::read_to_string(path).expect("bench/robustness.md");
    let row = format!("| {area} | {} | {} | {} | {} | 0 | 0 | 0 |", t.tried, t.refused, t.verified, t.accepted_unrun);
    let prefix = format!("| {area} |");
    let Some(old) = text.lines().find(|l| l.starts_with(&prefix)) else {
        panic!("bench/robustness.md has no row for `{area}`; expected:\n{row}");
    };
    if old != row {
        if std::env::var_os("UPDATE_ROBUSTNESS").is_some() {
            std::fs::write(path, text.replace(old, &row)).unwrap();
        } else {
            panic!(
                "bench/robustness.md is stale for `{area}` (rerun with UPDATE_ROBUSTNESS=1):\n  has {old}\n  got {row}"
            );
        }
    }
}

fn fail(msg: impl Into<String>) -> TestCaseError {
    TestCaseError::fail(msg.into())
}

/// Element types that buffers and tensor maps take, by size class.
#[derive(Clone, Copy, Debug)]
enum Dtype {
    U16,
    F16,
    U32,
    F32,
    I32,
    U64,
    F64,
}

impl Dtype {
    fn size(self) -> u64 {
        match self {
            Dtype::U16 | Dtype::F16 => 2,
            Dtype::U32 | Dtype::F32 | Dtype::I32 => 4,
            Dtype::U64 | Dtype::F64 => 8,
        }
    }
}

fn dtype() -> impl Strategy<Value = Dtype> {
    prop_oneof![
        Just(Dtype::U16),
        Just(Dtype::F16),
        Just(Dtype::U32),
        Just(Dtype::F32),
        Just(Dtype::I32),
        Just(Dtype::U64),
        Just(Dtype::F64)
    ]
}

/// Call `$f::<T>($args)` with the Rust type of a [`Dtype`].
macro_rules! with_elem {
    ($d:expr, $f:ident($($arg:expr),*)) => {
        match $d {
            Dtype::U16 => $f::<u16>($($arg),*),
            Dtype::F16 => $f::<half::f16>($($arg),*),
            Dtype::U32 => $f::<u32>($($arg),*),
            Dtype::F32 => $f::<f32>($($arg),*),
            Dtype::I32 => $f::<i32>($($arg),*),
            Dtype::U64 => $f::<u64>($($arg),*),
            Dtype::F64 => $f::<f64>($($arg),*),
        }
    };
}

/// Deterministic bytes for buffer contents.
fn pattern(n: usize, salt: u64) -> Vec<u8> {
    (0..n as u64).map(|i| (i.wrapping_mul(0x9E37_79B9).wrapping_add(salt) >> 7) as u8 | 1).collect()
}

// ---- buffer allocation -------------------------------------------------------------------------

/// The simulator's memory limit in these tests (small, so the limit is reachable).
const SIM_MEMORY: u64 = 64 << 20;

fn alloc_case<T: Elem + PartialEq + std::fmt::Debug>(len: usize) -> Result<Outcome, TestCaseError> {
    let dev = Device::sim(SimConfig { max_memory_bytes: SIM_MEMORY, ..SimConfig::fast() });
    let size = T::TYPE.size() as u128;
    let bytes = len as u128 * size;
    match dev.alloc::<T>(len) {
        Err(RuntimeError::BufferTooLarge { len: l, .. }) if bytes > usize::MAX as u128 && l == len => {
            Ok(Outcome::Refused)
        }
        Err(RuntimeError::SimulatorLimit(m)) if bytes <= usize::MAX as u128 && bytes > SIM_MEMORY as u128 => {
            prop_assert!(m.contains(&format!("allocating {bytes} bytes")), "{}", m);
            Ok(Outcome::Refused)
        }
        Err(e) => Err(fail(format!("{len} x {}: unexpected refusal: {e}", T::TYPE))),
        Ok(_) if bytes > SIM_MEMORY as u128 => Err(fail(format!("{len} x {}: {bytes} bytes accepted", T::TYPE))),
        Ok(mut buf) => {
            prop_assert_eq!(buf.len(), len);
            prop_assert_eq!(buf.bytes() as u128, bytes);
            if len > 1 << 16 {
                // Large (a debug build converts element by element): sizes checked only.
                return Ok(Outcome::AcceptedUnrun);
            }
            prop_assert!(to_bytes(&dev.download(&buf).unwrap()).iter().all(|&b| b == 0), "zero-filled");
            let data: Vec<T> = from_bytes(&pattern(len * size as usize, len as u64));
            dev.write(&mut buf, &data).unwrap();
            // Bit for bit (a NaN is not equal to itself).
            prop_assert_eq!(to_bytes(&dev.download(&buf).unwrap()), to_bytes(&data));
            Ok(Outcome::Verified)
        }
    }
}

#[test]
fn buffer_allocation() {
    let len = prop_oneof![
        4 => 0usize..5000,
        1 => 0usize..(SIM_MEMORY as usize / 2),
        1 => (0usize..64).prop_map(|d| (SIM_MEMORY as usize / 8) + d - 32),
        1 => (0usize..16).prop_map(|d| usize::MAX / 8 - 8 + d),
        1 => (0usize..16).prop_map(|d| usize::MAX / 4 - 8 + d),
        1 => (0usize..16).prop_map(|d| usize::MAX / 2 - 8 + d),
        1 => (0usize..16).prop_map(|d| usize::MAX - d),
        1 => any::<usize>(),
    ];
    run_area("buffer allocation", 0xA110C, 1000, (dtype(), len), |(d, len)| with_elem!(d, alloc_case(len)));
}

// ---- tensor-map encoding -----------------------------------------------------------------------

#[derive(Clone, Debug)]
struct MapInput {
    dtype: Dtype,
    dims: Vec<u64>,
    strides: Vec<u64>,
    box_dims: Vec<u32>,
    swizzle: Swizzle,
    /// Buffer length relative to the view's extent (in elements): `extent + slack`.
    slack: i64,
    /// Box coordinates to load (one per dimension, may be out of bounds).
    coords: Vec<i64>,
}

/// Why a map is invalid, from the `cuTensorMapEncodeTiled` rules and Phaser's one own rule
/// (a box moves at most 2^20 - 1 bytes, an mbarrier phase's tx range); `None` when valid.
fn map_problem(m: &MapInput, buffer_bytes: u128) -> Option<&'static str> {
    let rank = m.dims.len();
    let elem = m.dtype.size() as u128;
    if !(1..=5).contains(&rank) {
        return Some("rank");
    }
    if m.box_dims.len() != rank || m.strides.len() != rank - 1 {
        return Some("lengths");
    }
    if m.dims.iter().any(|&d| d == 0 || d > 1 << 32) {
        return Some("dim");
    }
    if m.strides.iter().any(|&s| s % 16 != 0 || s >= 1 << 40) {
        return Some("stride");
    }
    if m.box_dims.iter().any(|&b| b == 0 || b > 256) {
        return Some("box");
    }
    let inner = m.box_dims[0] as u128 * elem;
    if !inner.is_multiple_of(16) {
        return Some("inner row");
    }
    let span = match m.swizzle {
        Swizzle::None => u128::MAX,
        Swizzle::B32 => 32,
        Swizzle::B64 => 64,
        Swizzle::B128 => 128,
    };
    if inner > span {
        return Some("swizzle span");
    }
    if m.box_dims.iter().map(|&b| b as u128).product::<u128>() * elem > (1 << 20) - 1 {
        return Some("box bytes");
    }
    if extent(m) > buffer_bytes {
        return Some("extent");
    }
    None
}

/// Bytes from the view's first element to one past its last.
fn extent(m: &MapInput) -> u128 {
    let elem = m.dtype.size() as u128;
    let mut last = (m.dims.first().copied().unwrap_or(1).max(1) as u128 - 1) * elem;
    for (i, &s) in m.strides.iter().enumerate() {
        last += (m.dims.get(i + 1).copied().unwrap_or(1).max(1) as u128 - 1) * s as u128;
    }
    last + elem
}

/// Where byte `off` of a box lands in shared memory under `swizzle` (CUTLASS's
/// `Swizzle<B, 4, 3>`: the 16-byte chunk index XORed with the 128-byte row, B bits of each).
fn swizzled(off: usize, swizzle: Swizzle) -> usize {
    let bits = match swizzle {
        Swizzle::None => return off,
        Swizzle::B32 => 1,
        Swizzle::B64 => 2,
        Swizzle::B128 => 3,
    };
    let mask = (1usize << bits) - 1;
    off ^ (((off >> 7) & mask) << 4)
}

/// Shared-memory bytes a box occupies: a swizzle permutes 16-byte chunks within 128-byte
/// rows, so a box that ends inside a row may land up to that row's end.
fn footprint(box_bytes: u32) -> u32 {
    box_bytes.div_ceil(128) * 128
}

/// The shared-memory image of the box at `m.coords` (its footprint, zero-filled first):
/// elements in box order (dimension 0 fastest), zero where the box hangs over the tensor's
/// edge, at their swizzled offsets.
fn box_reference(m: &MapInput, data: &[u8]) -> Vec<u8> {
    let elem = m.dtype.size() as usize;
    let count: usize = m.box_dims.iter().map(|&b| b as usize).product();
    // Rows of a swizzled box narrower than the swizzle span are one span apart (H200).
    let inner = m.box_dims[0] as usize * elem;
    let span = match m.swizzle {
        Swizzle::None => 0,
        Swizzle::B32 => 32,
        Swizzle::B64 => 64,
        Swizzle::B128 => 128,
    };
    let pitch = inner.max(span);
    let mut out = vec![0u8; footprint((count * elem / inner * pitch) as u32) as usize];
    for i in 0..count {
        let (mut rest, mut off, mut inside) = (i, 0u128, true);
        for (d, &b) in m.box_dims.iter().enumerate() {
            let g = m.coords[d] + (rest % b as usize) as i64;
            rest /= b as usize;
            if g < 0 || g as u64 >= m.dims[d] {
                inside = false;
            } else {
                off += g as u128 * if d == 0 { elem as u128 } else { m.strides[d - 1] as u128 };
            }
        }
        if inside {
            let packed = i * elem;
            let at = swizzled(packed / inner * pitch + packed % inner, m.swizzle);
            out[at..at + elem].copy_from_slice(&data[off as usize..off as usize + elem]);
        }
    }
    out
}

/// The block zero-fills the box's footprint in dynamic shared memory, one thread loads the
/// box at the coordinates with TMA, then the block copies the footprint out word by word.
fn tma_kernel(rank: u8, box_bytes: u32, smem_bytes: u32) -> Kernel {
    let words = footprint(smem_bytes) / 4;
    let mut k = KernelBuilder::new("tma_box", Target::Sm90a);
    let map = k.param_tensor_map("map", rank);
    let out = k.param_global("out", Type::U32, true);
    let coords: Vec<Value> = (0..rank).map(|i| k.param(&format!("c{i}"), Type::S32)).collect();
    let bars = k.alloc_barriers("bar", 1);
    let smem = k.dynamic_shared(Type::U32, 0);
    let tid = k.thread_idx(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    k.for_range_step(tid, Value::u32(words), 64, |k, i| k.st_shared(smem, i, Value::u32(0)));
    // The copy engine (async proxy) writes after these generic-proxy stores.
    k.fence_proxy_async(phaser::codegen::ir::ProxySpace::SharedCta);
    k.cta_sync();
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.mbarrier_arrive_expect_tx(bar, Value::u32(box_bytes));
        let dst = k.shared_base_addr(smem);
        k.tma_load(dst, map, &coords, bar);
    });
    k.cta_sync();
    k.mbarrier_wait(bar, Value::u32(0));
    k.for_range_step(tid, Value::u32(words), 64, |k, i| {
        let v = k.ld_shared(smem, i);
        k.st_global(out, i, v);
    });
    k.finish().unwrap()
}

fn map_case<T: Elem>(m: &MapInput) -> Result<Outcome, TestCaseError> {
    let elem = m.dtype.size() as i128;
    let ext = extent(m) as i128;
    // The buffer: the view's extent plus `slack` elements when that is small enough to
    // allocate, else a small one (the view must then be refused for reaching past it).
    let len = if ext <= 8 << 20 { ((ext + elem - 1) / elem + m.slack as i128).max(0) as usize } else { 4096 };
    let dev = Device::sim(SimConfig::fast());
    let data = pattern(len * elem as usize, len as u64);
    let buf = dev.upload::<T>(&from_bytes(&data)).unwrap();
    let problem = map_problem(m, buf.bytes() as u128);
    let map = match (dev.tensor_map_strided(&buf, &m.dims, &m.strides, &m.box_dims, m.swizzle), problem) {
        (Err(RuntimeError::TensorMap(msg)), Some(_)) => {
            prop_assert!(!msg.is_empty());
            return Ok(Outcome::Refused);
        }
        (Err(e), _) => return Err(fail(format!("refused ({problem:?} expected): {e}"))),
        (Ok(_), Some(p)) => return Err(fail(format!("accepted, but the rule `{p}` is broken"))),
        (Ok(map), None) => map,
    };
    let box_bytes = map.box_bytes();
    prop_assert_eq!(box_bytes as u128, m.box_dims.iter().map(|&b| b as u128).product::<u128>() * elem as u128);
    // The shared memory the box occupies (rows of a narrow swizzled box are a span apart).
    let smem_bytes = map.desc().smem_box_bytes();
    if smem_bytes > 200 * 1024 {
        // A valid map whose box is larger than this test's shared-memory window.
        return Ok(Outcome::AcceptedUnrun);
    }
    let rank = m.dims.len() as u8;
    let k = tma_kernel(rank, box_bytes, smem_bytes);
    let out = dev.alloc::<u32>(footprint(smem_bytes) as usize / 4).unwrap();
    let cfg = LaunchConfig::linear(1, 64).with_dynamic_shared(footprint(smem_bytes));
    let launch = |coords: &[i64]| {
        let mut args = vec![Arg::TensorMap(&map), Arg::buffer(&out)];
        args.extend(coords.iter().map(|&c| Arg::scalar(c as i32)));
        dev.launch(&k, cfg, &args)
    };
    // The GPU faults on an inner coordinate that is not a whole number of 16 bytes (measured
    // on the H200, bench/gpu-runs.md): the simulator must refuse that launch with the finding;
    // the box is then checked at the aligned inner coordinate just below.
    let mut m = m.clone();
    let step = 16 / elem as i64;
    if m.coords[0].rem_euclid(step) != 0 {
        let Err(e) = launch(&m.coords) else { return Err(fail("a misaligned inner coordinate ran")) };
        let e = e.to_string();
        let said = format!("TMA tensor load: the innermost tensor coordinate {} (of ", m.coords[0]);
        prop_assert!(e.contains("error[misaligned]") && e.contains(&said), "{}", e);
        m.coords[0] = m.coords[0].div_euclid(step) * step;
    }
    launch(&m.coords).map_err(|e| fail(format!("launch: {e}")))?;
    let got = to_bytes(&dev.download(&out).unwrap());
    let want = box_reference(&m, &data);
    prop_assert!(got == want, "the box in shared memory differs from the reference");
    Ok(Outcome::Verified)
}

fn map_input() -> impl Strategy<Value = MapInput> {
    let dim = prop_oneof![40 => 1u64..40, 1 => Just(0u64), 1 => Just(1u64 << 32), 1 => Just((1u64 << 32) + 1), 1 => 1u64..(1 << 20)];
    let box_dim = prop_oneof![40 => 1u32..12, 1 => Just(0u32), 1 => Just(256u32), 1 => Just(257u32), 1 => 1u32..300];
    let rank = prop_oneof![1 => Just(0usize), 20 => 1usize..=5, 1 => Just(6usize)];
    (dtype(), rank, proptest::collection::vec(dim, 6), proptest::collection::vec(box_dim, 6))
        .prop_flat_map(|(d, rank, dims, boxes)| {
            let elem = d.size() as u32;
            let dims: Vec<u64> = dims[..rank].to_vec();
            // The inner box row is usually a multiple of 16 bytes (otherwise refused).
            let box0 = prop_oneof![8 => (1u32..5).prop_map(move |k| k * 16 / elem), 1 => Just(boxes[0])];
            let rest: Vec<u32> = boxes[1..rank.max(1)].to_vec();
            let stride = prop_oneof![
                30 => (0u64..3).prop_map(|pad| pad * 16),
                1 => 1u64..4096,
                1 => Just(1u64 << 40),
                1 => Just(1u64 << 39),
            ];
            let strides = proptest::collection::vec(stride, rank.saturating_sub(1));
            let swizzle = prop_oneof![3 => Just(Swizzle::None), 1 => Just(Swizzle::B32), 1 => Just(Swizzle::B64), 2 => Just(Swizzle::B128)];
            let coords = proptest::collection::vec(-20i64..60, rank);
            let odd_lengths = prop_oneof![40 => Just(0i8), 1 => Just(-1i8), 1 => Just(1i8)];
            let slack = prop_oneof![4 => Just(0i64), 1 => Just(-1i64), 4 => Just(5i64)];
            (Just(d), Just(dims), box0, Just(rest), strides, swizzle, coords, slack, odd_lengths)
        })
        .prop_map(|(d, dims, box0, rest, stride_kinds, swizzle, coords, slack, odd)| {
            let elem = d.size();
            let mut box_dims: Vec<u32> = if dims.is_empty() { Vec::new() } else { std::iter::once(box0).chain(rest).collect() };
            // Strides: dense rows plus padding (a multiple of 16), or the raw choice.
            let mut strides = Vec::new();
            let mut row = dims.first().map_or(elem, |&d0| d0.saturating_mul(elem));
            for (i, &s) in stride_kinds.iter().enumerate() {
                let st = if s < 48 { row.div_ceil(16).saturating_mul(16).saturating_add(s) } else { s };
                strides.push(st);
                row = st.saturating_mul(dims[i + 1]);
            }
            match odd {
                -1 => {
                    box_dims.pop();
                }
                1 => strides.push(16),
                _ => {}
            }
            let coords = coords.iter().zip(&dims).map(|(&c, &d)| c.min(d as i64 + 2)).collect();
            MapInput { dtype: d, dims, strides, box_dims, swizzle, slack, coords }
        })
}

#[test]
fn tensor_map_encoding() {
    run_area("tensor-map encoding", 0x007E_4503, 1000, map_input(), |m| with_elem!(m.dtype, map_case(&m)));
}

// ---- launch configurations ---------------------------------------------------------------------

#[derive(Clone, Debug)]
struct LaunchInput {
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_bytes: u32,
    static_bytes: u32,
    uses_dynamic: bool,
    reqntid: Option<[u32; 3]>,
    maxntid: Option<[u32; 3]>,
    cluster: Option<[u32; 3]>,
}

/// The step budget of the launch tests' simulator.
const MAX_STEPS: u64 = 1 << 26;
/// Accepted launches up to this many threads are simulated and compared.
const RUN_THREADS: u64 = 4096;

fn shape_ok(s: [u32; 3]) -> bool {
    s.iter().all(|&x| x >= 1)
        && s[0] <= 1024
        && s[1] <= 1024
        && s[2] <= 64
        && s.iter().map(|&x| x as u64).product::<u64>() <= 1024
}

/// Whether the kernel builds (`Err`: it must not) and the launch is valid, from the limits
/// of sm_90a (CUDA C++ Programming Guide, compute capability 9.0).
fn launch_problem(l: &LaunchInput) -> Result<Option<&'static str>, &'static str> {
    if static_size(l.static_bytes) > 48 * 1024 {
        return Err("static shared memory");
    }
    if l.reqntid.is_some_and(|r| !shape_ok(r)) || l.maxntid.is_some_and(|m| !shape_ok(m)) {
        return Err("declared block shape");
    }
    if l.reqntid.is_some() && l.maxntid.is_some() {
        return Err(".reqntid with .maxntid (ptxas: conflicting directives)");
    }
    if l.cluster.is_some_and(|c| c.contains(&0) || c.iter().map(|&x| x as u64).product::<u64>() > 16) {
        return Err("cluster shape");
    }
    let threads: u64 = l.block.iter().map(|&x| x as u64).product();
    let p = if l.grid.contains(&0) || l.block.contains(&0) {
        Some("zero dimension")
    } else if !shape_ok(l.block) {
        Some("block")
    } else if l.grid[0] > i32::MAX as u32 || l.grid[1] > 65535 || l.grid[2] > 65535 {
        Some("grid")
    } else if l.maxntid.is_some_and(|m| threads > m.iter().map(|&x| x as u64).product()) {
        Some(".maxntid")
    } else if l.reqntid.is_some_and(|r| r != l.block) {
        Some(".reqntid")
    } else if l.cluster.is_some_and(|c| (0..3).any(|d| !l.grid[d].is_multiple_of(c[d]))) {
        Some("cluster multiple")
    } else if l.uses_dynamic && l.dynamic_bytes == 0 {
        Some("no dynamic shared memory")
    } else if (if l.dynamic_bytes > 0 {
        static_size(l.static_bytes).div_ceil(1024) * 1024 + l.dynamic_bytes as u64
    } else {
        static_size(l.static_bytes)
    }) > 227 * 1024
    {
        Some("shared memory")
    } else if l.grid.iter().map(|&x| x as u128).product::<u128>() * threads as u128 > MAX_STEPS as u128 {
        Some("simulator budget")
    } else {
        None
    };
    Ok(p)
}

/// The static shared bytes of the launch kernel: `requested` rounded up to whole u32s.
fn static_size(requested: u32) -> u64 {
    requested.div_ceil(4) as u64 * 4
}

/// Every thread writes its global linear index + 1 at that index (3-D grid and block).
fn launch_kernel(l: &LaunchInput) -> Result<Kernel, String> {
    let mut k = KernelBuilder::new("shape", Target::Sm90a);
    if let Some(r) = l.reqntid {
        k.require_block(r[0], r[1], r[2]);
    }
    if let Some(m) = l.maxntid {
        k.max_block(m[0], m[1], m[2]);
    }
    if let Some(c) = l.cluster {
        k.cluster(c[0], c[1], c[2]);
    }
    let out = k.param_global("out", Type::U32, true);
    if l.static_bytes > 0 {
        k.alloc_shared("pad", Type::U32, l.static_bytes.div_ceil(4));
    }
    let ids: Vec<[Value; 2]> = [Dim::X, Dim::Y, Dim::Z].iter().map(|&d| [k.thread_idx(d), k.block_dim(d)]).collect();
    let ctas: Vec<[Value; 2]> = [Dim::X, Dim::Y, Dim::Z].iter().map(|&d| [k.block_idx(d), k.grid_dim(d)]).collect();
    let linear = |k: &mut KernelBuilder, v: &[[Value; 2]]| {
        let t = k.mul(v[2][0], v[1][1]);
        let t = k.add(t, v[1][0]);
        let t = k.mul(t, v[0][1]);
        k.add(t, v[0][0])
    };
    let tid = linear(&mut k, &ids);
    let cta = linear(&mut k, &ctas);
    let per_block = k.mul(ids[0][1], ids[1][1]);
    let per_block = k.mul(per_block, ids[2][1]);
    let base = k.mul(cta, per_block);
    let gid = k.add(base, tid);
    let v = k.add(gid, Value::u32(1));
    if l.uses_dynamic {
        let dynamic = k.dynamic_shared(Type::U32, 0);
        k.st_shared(dynamic, Value::u32(0), v);
    }
    k.st_global(out, gid, v);
    k.finish().map_err(|e| e.to_string())
}

fn launch_case(l: LaunchInput) -> Result<Outcome, TestCaseError> {
    let expected = launch_problem(&l);
    let kernel = match (launch_kernel(&l), expected) {
        (Err(_), Err(_)) => return Ok(Outcome::Refused),
        (Err(e), Ok(_)) => return Err(fail(format!("the kernel was refused: {e}"))),
        (Ok(_), Err(p)) => return Err(fail(format!("the kernel was built despite its {p}"))),
        (Ok(k), Ok(_)) => k,
    };
    let problem = expected.unwrap();
    let cfg = LaunchConfig {
        grid: l.grid,
        block: l.block,
        dynamic_shared_bytes: l.dynamic_bytes,
        ..LaunchConfig::linear(1, 1)
    };
    let total = cfg.total_threads();
    let dev = Device::sim(SimConfig { max_steps: MAX_STEPS, ..SimConfig::fast() });
    if problem.is_none() && total > RUN_THREADS as u128 {
        // Valid, but too large to simulate here: the shape check must pass, with a 1-element
        // buffer standing in (nothing runs, so nothing reads it).
        phaser::runtime::device::check_config(&kernel, &cfg).map_err(|e| fail(format!("refused: {e}")))?;
        return Ok(Outcome::AcceptedUnrun);
    }
    let out = dev.alloc::<u32>((total as usize).clamp(1, RUN_THREADS as usize)).unwrap();
    match (dev.launch(&kernel, cfg, &[Arg::buffer(&out)]), problem) {
        (
            Err(RuntimeError::BadLaunch { .. } | RuntimeError::SharedMemory(_) | RuntimeError::SimulatorLimit(_)),
            Some(_),
        ) => Ok(Outcome::Refused),
        (Err(e), _) => Err(fail(format!("launch error ({problem:?} expected): {e}"))),
        (Ok(_), Some(p)) => Err(fail(format!("launched despite its {p}"))),
        (Ok(_), None) => {
            let got = dev.download(&out).unwrap();
            let want: Vec<u32> = (1..=total as u32).collect();
            prop_assert_eq!(got, want);
            Ok(Outcome::Verified)
        }
    }
}

fn launch_input() -> impl Strategy<Value = LaunchInput> {
    let boundary = prop_oneof![
        4 => 1u32..5,
        1 => Just(0u32),
        1 => Just(65535u32),
        1 => Just(65536u32),
        1 => Just(i32::MAX as u32),
        1 => Just(1u32 << 31),
    ];
    let grid = prop_oneof![6 => [1u32..5, 1u32..3, 1u32..3], 1 => [boundary.clone(), boundary.clone(), boundary]];
    let odd_dim =
        prop_oneof![Just(0u32), Just(64u32), Just(65u32), Just(1024u32), Just(1025u32), Just(65536u32), 1u32..2000];
    // Mostly shapes of at most 1024 threads, sometimes anything.
    let shape = move || {
        prop_oneof![
            6 => [1u32..=256, 1u32..=4, 1u32..=2],
            1 => [odd_dim.clone(), odd_dim.clone(), odd_dim.clone()],
            1 => (odd_dim.clone(), 1u32..=2, 1u32..=2).prop_map(|(x, y, z)| [x, y, z]),
        ]
    };
    // The declared shapes: none, the launch's own, a roomy maximum, any, or both kinds.
    let declared = prop_oneof![
        3 => Just((0u8, None)),
        2 => Just((1u8, None)),
        2 => Just((2u8, None)),
        1 => shape().prop_map(|s| (3u8, Some(s))),
        1 => shape().prop_map(|s| (4u8, Some(s))),
        1 => Just((5u8, None)),
    ];
    let cluster = prop_oneof![
        5 => Just(None),
        2 => (1u32..5).prop_map(|c| Some([c, 1, 1])),
        1 => [0u32..3, 0u32..3, 0u32..2].prop_map(Some),
        1 => prop_oneof![Just([16u32, 1, 1]), Just([17, 1, 1]), Just([4, 4, 2])].prop_map(Some),
    ];
    (
        grid,
        shape(),
        prop_oneof![6 => Just(0u32), 5 => 4u32..8192, 1 => Just(227 * 1024), 1 => Just(226 * 1024), 1 => Just(227 * 1024 - 1023)],
        prop_oneof![6 => Just(0u32), 3 => 1u32..4096, 1 => Just(48 * 1024), 1 => Just(48 * 1024 + 2)],
        prop_oneof![3 => Just(false), 1 => Just(true)],
        declared,
        cluster,
    )
        .prop_map(|(grid, block, dynamic_bytes, static_bytes, uses_dynamic, (declare, shape), cluster)| {
            let (reqntid, maxntid) = match declare {
                1 => (Some(block), None),
                2 => (None, Some([1024, 1, 1])),
                3 => (shape, None),
                4 => (None, shape),
                5 => (Some(block), Some(block)),
                _ => (None, None),
            };
            // A cluster's grid is usually a whole number of clusters.
            let grid = match cluster {
                Some(c) if grid[0] < 4 && c.iter().all(|&x| x > 0) => [c[0] * grid[0], c[1].saturating_mul(grid[1]), c[2]],
                _ => grid,
            };
            LaunchInput { grid, block, dynamic_bytes, static_bytes, uses_dynamic, reqntid, maxntid, cluster }
        })
}

#[test]
fn launch_configurations() {
    run_area("launch configurations", 0x1A_0C4, 2000, launch_input(), launch_case);
}

// ---- shared allocations ------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct AllocInput {
    elem: Dtype,
    len: u32,
    /// `None`: `alloc_shared` (its own alignment); `Some(a)`: `alloc_shared_aligned(.., a)`.
    align: Option<u32>,
}

fn elem_type(d: Dtype) -> Type {
    match d {
        Dtype::U16 => Type::U16,
        Dtype::F16 => Type::F16,
        Dtype::U32 => Type::U32,
        Dtype::F32 => Type::F32,
        Dtype::I32 => Type::S32,
        Dtype::U64 => Type::U64,
        Dtype::F64 => Type::F64,
    }
}

/// Where each array lands (`[start, end)`), or why the allocations are invalid: the layout
/// rules (declaration order, each at the next multiple of its alignment) and sm_90a's 48 KiB
/// of static shared memory and 128 KiB largest alignment.
fn shared_layout(allocs: &[AllocInput]) -> Result<Vec<(u128, u128)>, &'static str> {
    let mut end = 0u128;
    let mut out = Vec::new();
    for a in allocs {
        let size = a.elem.size() as u128;
        if a.len == 0 {
            return Err("length 0");
        }
        let align = match a.align {
            None => {
                if size * a.len as u128 >= 128 {
                    128
                } else {
                    size.max(16)
                }
            }
            Some(x) if x < 16 || !x.is_power_of_two() || x > 128 * 1024 => return Err("alignment"),
            Some(x) => (x as u128).max(size),
        };
        let start = end.div_ceil(align) * align;
        end = start + size * a.len as u128;
        out.push((start, end));
    }
    if end > 48 * 1024 {
        return Err("static shared memory");
    }
    Ok(out)
}

/// Thread 0 writes `first` into element 0 and `last` into the last element of each array,
/// then reads them all back into `out` (overlapping arrays would mix them up).
fn shared_kernel(name: &str, allocs: &[AllocInput]) -> Result<Kernel, String> {
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let arrays: Vec<_> = allocs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let t = elem_type(a.elem);
            match a.align {
                None => k.alloc_shared(&format!("a{i}"), t, a.len),
                Some(al) => k.alloc_shared_aligned(&format!("a{i}"), t, a.len, al),
            }
        })
        .collect();
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        for (i, (arr, a)) in arrays.iter().zip(allocs).enumerate() {
            let t = elem_type(a.elem);
            for (j, idx) in [0, a.len.saturating_sub(1)].into_iter().enumerate() {
                let v = Value::u32(i as u32 * 2 + j as u32 + 1);
                let v = k.cvt(v, t);
                k.st_shared(*arr, Value::u32(idx), v);
            }
        }
        for (i, (arr, a)) in arrays.iter().zip(allocs).enumerate() {
            for (j, idx) in [0, a.len.saturating_sub(1)].into_iter().enumerate() {
                let v = k.ld_shared(*arr, Value::u32(idx));
                let v = k.cvt(v, Type::U32);
                k.st_global(out, Value::u32(i as u32 * 2 + j as u32), v);
            }
        }
    });
    k.finish().map_err(|e| e.to_string())
}

fn alloc_input() -> impl Strategy<Value = AllocInput> {
    let len =
        prop_oneof![8 => 1u32..600, 1 => Just(0u32), 1 => Just(1u32 << 29), 1 => Just(u32::MAX), 1 => 1u32..20000];
    let align = prop_oneof![
        4 => Just(None),
        3 => (4u32..12).prop_map(|p| Some(1 << p)),
        1 => (12u32..32).prop_map(|p| Some(1 << p)),
        1 => (1u32..5000).prop_map(Some),
    ];
    (dtype(), len, align).prop_map(|(elem, len, align)| AllocInput { elem, len, align })
}

#[test]
fn shared_allocations() {
    let accepted = Mutex::new(Vec::new());
    let tally =
        run_area("shared allocations", 0x5_4A2ED, 800, proptest::collection::vec(alloc_input(), 1..5), |allocs| {
            let n = accepted.lock().unwrap().len();
            let name = format!("shared{n}");
            match (shared_kernel(&name, &allocs), shared_layout(&allocs)) {
                (Err(_), Err(_)) => Ok(Outcome::Refused),
                (Err(e), Ok(_)) => Err(fail(format!("refused: {e}"))),
                (Ok(_), Err(p)) => Err(fail(format!("built despite its {p}"))),
                (Ok(k), Ok(layout)) => {
                    let placed = k.shared_layout().placements;
                    let placed: Vec<(u128, u128)> = placed.iter().map(|p| (p.start as u128, p.end as u128)).collect();
                    prop_assert_eq!(&placed, &layout, "the layout");
                    let dev = Device::sim(SimConfig::fast());
                    let out = dev.alloc::<u32>(allocs.len() * 2).unwrap();
                    dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)])
                        .map_err(|e| fail(format!("{e}")))?;
                    let got = dev.download(&out).unwrap();
                    let want: Vec<u32> = allocs
                        .iter()
                        .enumerate()
                        .flat_map(|(i, a)| {
                            let (first, last) = (i as u32 * 2 + 1, i as u32 * 2 + 2);
                            // A one-element array holds the last write.
                            if a.len == 1 {
                                [last, last]
                            } else {
                                [first, last]
                            }
                        })
                        .collect();
                    prop_assert_eq!(got, want);
                    accepted.lock().unwrap().push(k);
                    Ok(Outcome::Verified)
                }
            }
        });
    // Every accepted kernel assembles: one module, one ptxas run.
    let kernels = accepted.into_inner().unwrap();
    assert_eq!(kernels.len() as u32, tally.verified);
    assemble_all(kernels, Target::Sm90a);
}

/// Assemble `kernels` (distinct names, one target) in one module; on failure, find the
/// kernel ptxas rejects.
fn assemble_all(kernels: Vec<Kernel>, target: Target) {
    if kernels.is_empty() {
        return;
    }
    let ptxas = ptxas::require();
    let module = Module::new(kernels);
    let ptx = emit_module(&module, &EmitOptions::default()).unwrap();
    if ptxas::assemble(&ptxas, &ptx, target.name()).is_ok() {
        return;
    }
    for k in module.kernels {
        let ptx = emit_module(&Module::new(vec![k.clone()]), &EmitOptions::default()).unwrap();
        if let Err(e) = ptxas::assemble(&ptxas, &ptx, target.name()) {
            panic!("ptxas rejects `{}` ({target}): {e}\n{ptx}", k.name());
        }
    }
    panic!("ptxas rejects the module of {target} kernels, but each kernel alone assembles");
}

// ---- barrier counts and tx bytes ---------------------------------------------------------------

#[derive(Clone, Debug)]
struct BarrierInput {
    /// The arrival count's type and value.
    count: (Type, i128),
    /// The tx byte count's type and value.
    tx: (Type, i128),
}

fn imm(ty: Type, v: i128) -> Value {
    if ty.is_signed() {
        Value::imm_i(v as i64, ty)
    } else {
        Value::imm_u(v as u64, ty)
    }
}

/// Thread 0 initializes a barrier for `count` arrivals, expects and completes `tx` bytes,
/// arrives with the whole count at once, waits for the phase and writes 1.
fn barrier_kernel(b: &BarrierInput) -> Result<Kernel, String> {
    let mut k = KernelBuilder::new("counts", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let bars = k.alloc_barriers("bar", 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, imm(b.count.0, b.count.1));
        k.mbarrier_expect_tx(bar, imm(b.tx.0, b.tx.1));
        k.mbarrier_complete_tx(bar, imm(b.tx.0, b.tx.1));
        k.mbarrier_arrive_with(bar, ArriveOpts { count: Some(imm(b.count.0, b.count.1)), ..Default::default() });
        k.mbarrier_wait(bar, Value::u32(0));
        k.st_global(out, Value::u32(0), Value::u32(1));
    });
    k.finish().map_err(|e| e.to_string())
}

/// A value as the builder reads an immediate of `ty` (its bits in `ty`'s width).
fn as_given(ty: Type, v: i128) -> i128 {
    imm(ty, v).as_imm_i128().unwrap()
}

fn count_value() -> impl Strategy<Value = (Type, i128)> {
    let ty = prop_oneof![4 => Just(Type::U32), 2 => Just(Type::U64), 1 => Just(Type::S32), 1 => Just(Type::S64)];
    let v = prop_oneof![
        6 => 0i128..2000,
        1 => Just((1i128 << 20) - 1),
        1 => Just(1i128 << 20),
        1 => Just((1i128 << 32) - 1),
        1 => Just(1i128 << 32),
        1 => Just((1i128 << 32) + 1),
        1 => Just(-1i128),
        1 => any::<u32>().prop_map(i128::from),
        1 => any::<i64>().prop_map(i128::from),
    ];
    (ty, v).prop_map(|(t, v)| (t, as_given(t, v)))
}

#[test]
fn barrier_counts_and_tx_bytes() {
    let max = (1i128 << 20) - 1;
    run_area(
        "barrier counts and tx bytes",
        0xBA_2217,
        1500,
        (count_value(), count_value()).prop_map(|(count, tx)| BarrierInput { count, tx }),
        |b| {
            // An arrival count is 1..=2^20-1 and a tx count 0..=2^20-1 (PTX ISA, mbarrier), each
            // as the value given, whatever its type.
            let valid = (1..=max).contains(&b.count.1) && (0..=max).contains(&b.tx.1);
            match (barrier_kernel(&b), valid) {
                (Err(_), false) => Ok(Outcome::Refused),
                (Err(e), true) => Err(fail(format!("refused: {e}"))),
                (Ok(_), false) => Err(fail("built with an out-of-range count")),
                (Ok(k), true) => {
                    let dev = Device::sim(SimConfig::fast());
                    let out = dev.alloc::<u32>(1).unwrap();
                    dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)])
                        .map_err(|e| fail(format!("{e}")))?;
                    prop_assert_eq!(dev.download(&out).unwrap(), vec![1]);
                    Ok(Outcome::Verified)
                }
            }
        },
    );
}

// ---- kernels generated from the op registry ----------------------------------------------------

/// A generated kernel body: op calls (an op and one of its variants, by index) in nested
/// `if`s and bounded loops.
#[derive(Clone, Debug)]
enum Item {
    Op(usize, usize),
    If(Vec<Item>),
    Loop(u32, Vec<Item>),
}

fn items() -> impl Strategy<Value = Vec<Item>> {
    let op = (any::<usize>(), any::<usize>()).prop_map(|(o, v)| Item::Op(o, v));
    let item = op.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 1..4).prop_map(Item::If),
            (1u32..3, proptest::collection::vec(inner, 1..4)).prop_map(|(n, b)| Item::Loop(n, b)),
        ]
    });
    proptest::collection::vec(item, 1..6)
}

/// Build the items into `k`; `flag` guards the `if`s (a kernel parameter, so not folded).
fn emit_items(k: &mut KernelBuilder, items: &[Item], flag: Value, ops: &[&'static OpDef]) {
    for it in items {
        match it {
            Item::Op(o, v) => {
                let op = ops[o % ops.len()];
                let vs: Vec<Variant> = registry::variants(op);
                let var = &vs[v % vs.len()];
                let args = registry::sample_args(k, op, &var.hints);
                registry::call(k, op.path, args, var.elem, "gen");
            }
            Item::If(body) => k.if_then(flag, |k| emit_items(k, body, flag, ops)),
            Item::Loop(n, body) => k.for_range(Value::u32(0), Value::u32(*n), |k, _| emit_items(k, body, flag, ops)),
        }
    }
}

/// One buffer of any element type (what a generated kernel's buffer parameter gets).
enum AnyBuffer {
    U16(phaser::Buffer<u16>),
    U32(phaser::Buffer<u32>),
    U64(phaser::Buffer<u64>),
    I16(phaser::Buffer<i16>),
    I32(phaser::Buffer<i32>),
    I64(phaser::Buffer<i64>),
    F16(phaser::Buffer<half::f16>),
    BF16(phaser::Buffer<half::bf16>),
    F32(phaser::Buffer<f32>),
    F64(phaser::Buffer<f64>),
}

impl AnyBuffer {
    fn new(dev: &Device, t: Type, len: usize) -> AnyBuffer {
        match t {
            Type::U16 | Type::B16 => AnyBuffer::U16(dev.alloc(len).unwrap()),
            Type::U32 | Type::B32 => AnyBuffer::U32(dev.alloc(len).unwrap()),
            Type::U64 | Type::B64 => AnyBuffer::U64(dev.alloc(len).unwrap()),
            Type::S16 => AnyBuffer::I16(dev.alloc(len).unwrap()),
            Type::S32 => AnyBuffer::I32(dev.alloc(len).unwrap()),
            Type::S64 => AnyBuffer::I64(dev.alloc(len).unwrap()),
            Type::F16 => AnyBuffer::F16(dev.alloc(len).unwrap()),
            Type::BF16 => AnyBuffer::BF16(dev.alloc(len).unwrap()),
            Type::F32 | Type::Pred => AnyBuffer::F32(dev.alloc(len).unwrap()),
            Type::F64 => AnyBuffer::F64(dev.alloc(len).unwrap()),
            // FP8 lives in tiles the registry's samples allocate; no op's sample is an FP8 buffer
            // (the host has them: `F8E4M3`, `F8E5M2`), so one here is a generator bug.
            Type::E4M3 | Type::E5M2 => panic!("a generated kernel with an {t} buffer parameter: no op samples one"),
        }
    }
    fn arg(&self) -> Arg<'_> {
        match self {
            AnyBuffer::U16(b) => Arg::buffer(b),
            AnyBuffer::U32(b) => Arg::buffer(b),
            AnyBuffer::U64(b) => Arg::buffer(b),
            AnyBuffer::I16(b) => Arg::buffer(b),
            AnyBuffer::I32(b) => Arg::buffer(b),
            AnyBuffer::I64(b) => Arg::buffer(b),
            AnyBuffer::F16(b) => Arg::buffer(b),
            AnyBuffer::BF16(b) => Arg::buffer(b),
            AnyBuffer::F32(b) => Arg::buffer(b),
            AnyBuffer::F64(b) => Arg::buffer(b),
        }
    }
}

/// Simulate a generated kernel with small arguments: scalars 1, buffers of 1024 elements,
/// rank-2 tensor maps over a 64 x 64 f32 tensor. Findings and errors are fine (random op
/// sequences deadlock or misuse barriers); only a panic or a hang would be a failure.
fn simulate_generated(k: &Kernel) -> Result<(), RuntimeError> {
    use phaser::codegen::ir::ParamKind;
    let dev = Device::sim(SimConfig { max_steps: 2_000_000, ..SimConfig::fast() });
    let tensor = dev.alloc::<f32>(64 * 64)?;
    let map = dev.tensor_map(&tensor, &[64, 64], &[16, 16], Swizzle::None)?;
    let buffers: Vec<Option<AnyBuffer>> = k
        .params()
        .iter()
        .map(|p| match p.kind {
            ParamKind::Global { elem, .. } => Some(AnyBuffer::new(&dev, elem, 1024)),
            _ => None,
        })
        .collect();
    let args: Vec<Arg> = k
        .params()
        .iter()
        .zip(&buffers)
        .map(|(p, b)| match (p.kind, b) {
            (ParamKind::Scalar(ty), _) => Arg::Scalar { ty, bits: 1 },
            (ParamKind::Global { .. }, Some(b)) => b.arg(),
            _ => Arg::TensorMap(&map),
        })
        .collect();
    let block = k.bounds().reqntid.unwrap_or([128, 1, 1]);
    let grid = k.bounds().cluster.unwrap_or([1, 1, 1]);
    let dynamic = if k.uses_dynamic_shared() { 4096 } else { 0 };
    let cfg = LaunchConfig { grid, block, dynamic_shared_bytes: dynamic, ..LaunchConfig::linear(1, 1) };
    dev.simulate(k, cfg, &args).map(|_| ())
}

#[test]
fn generated_kernels() {
    let ops: Vec<&'static OpDef> = registry::ops().collect();
    let accepted = Mutex::new(Vec::<Kernel>::new());
    run_area(
        "generated kernels (op registry)",
        0x6E4E_2A7E,
        400,
        (0usize..Target::ALL.len(), items()),
        |(t, items)| {
            let target = Target::ALL[t];
            let name = format!("gen{}", accepted.lock().unwrap().len());
            let mut k = KernelBuilder::new(&name, target);
            let flag = k.param("flag", Type::U32);
            let flag = k.ne(flag, Value::u32(0));
            emit_items(&mut k, &items, flag, &ops);
            let Ok(kernel) = k.finish() else {
                // Refused with build errors (an op the target lacks, a value out of range).
                return Ok(Outcome::Refused);
            };
            let ptx =
                phaser::codegen::emit_kernel(&kernel).map_err(|e| fail(format!("accepted but not printable: {e}")))?;
            let entry = format!(".entry {name}(");
            prop_assert!(ptx.contains(&entry), "the entry is named");
            // Any outcome but a panic: random op sequences deadlock or misuse barriers, which
            // the simulator reports.
            if let Err(e) = simulate_generated(&kernel) {
                prop_assert!(!e.to_string().is_empty());
            }
            accepted.lock().unwrap().push(kernel);
            Ok(Outcome::Verified)
        },
    );
    // Every accepted kernel assembles for its target: one module and one ptxas run per target.
    let kernels = accepted.into_inner().unwrap();
    for target in Target::ALL {
        assemble_all(kernels.iter().filter(|k| k.target() == target).cloned().collect(), target);
    }
}

// ---- the constant evaluator: folded = simulated -------------------------------------------------

mod eval_table;

/// Every arithmetic, comparison, conversion, shift and select op at every type the builder
/// takes, edge operands over-represented: the constant form (folded where the builder folds)
/// and the loaded form (computed by the simulator at run time) both equal the evaluator's
/// value; where the evaluator refuses the constant (an overflow, a division by zero) the
/// builder refuses it too, at build time, and the run-time form still computes the evaluator's
/// wrapped value.
#[test]
fn constant_evaluator() {
    let dev = Device::sim(SimConfig::fast());
    let tried = Mutex::new(Vec::new());
    run_area("constant evaluator (folded = simulated)", 0xE7A1_F01D, 3000, eval_table::entry(), |e| {
        let expected = e.expected();
        let [(constant, loaded)] = eval_table::run(&dev, &[e])[..] else { unreachable!("one entry") };
        prop_assert_eq!(loaded, expected, "run time vs the evaluator: {:?}", e);
        tried.lock().unwrap().push(e);
        match e.fold() {
            Ok(()) => {
                if let Some(c) = constant {
                    prop_assert_eq!(c, expected, "constant form vs the evaluator: {:?}", e);
                }
                Ok(Outcome::Verified)
            }
            Err(why) => {
                prop_assert!(constant.is_none());
                let refusal = eval_table::builder_refusal(&e);
                prop_assert!(refusal.contains(&why.to_string()), "{e:?}: {refusal}");
                Ok(Outcome::Refused)
            }
        }
    });
    // The table's PTX assembles, every form in one kernel, as the GPU half runs it.
    let (kernel, _) = eval_table::kernel(&tried.into_inner().unwrap());
    assemble_all(vec![kernel], Target::Sm90a);
}
