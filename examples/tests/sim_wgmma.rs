//! wgmma in the simulator, instruction by instruction: one warpgroup computes
//! `D (64 x 32) = A (64 x 32) * B` with two k16 `wgmma.mma_async` (the second accumulating),
//! operands staged in swizzled shared tiles by ordinary stores; the results, read back per
//! thread through the accumulator's fragment layout, equal the f32 sum in k order bit for bit.
//! Each PTX rule the checker enforces is then broken once and reported at its Rust line.

use half::bf16;
use phaser::codegen::arch::fragment::d_register_offset;
use phaser::codegen::builder::{Accumulator, KernelBuilder, MatrixDesc};
use phaser::codegen::ir::{Dim, Major, MmaElem, MmaOperand, ProxySpace, SmemTile, Space, Swizzle, Type, Value};
use phaser::codegen::{Kernel, Target};
use phaser::runtime::sim::{Category, Finding, SimConfig};
use phaser::runtime::RuntimeError;
use phaser::{Arg, Device, LaunchConfig};

const N: u32 = 32;
const K: u32 = 32;

/// What a test kernel does wrong (or nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    None,
    /// No `wgmma.fence` at all.
    NoFence,
    /// `acc.zero()` after the fence, before the wgmmas.
    ZeroAfterFence,
    /// No `wgmma.wait_group` before the epilogue reads the accumulator.
    NoWaitGroup,
    /// No `fence.proxy.async` between the shared stores and the wgmmas.
    NoProxyFence,
    /// Warp 3 skips the wgmmas: the warpgroup never issues them.
    Warp3Skips,
    /// k-step 0 into `acc`, committed; k-step 1 into a second accumulator, committed;
    /// `wait_group 1` (retires the first group only); both stored.
    WaitOneOfTwo,
    /// Inline PTX writes an accumulator register after the commit, before the `wait_group`.
    AsmWritesAccumulator,
    /// A float function (`ex2`, as softmax does) reads an accumulator register after the
    /// commit, before the `wait_group`.
    Ex2ReadsAccumulator,
}

/// Which way A reaches the tensor core and how B is stored.
#[derive(Clone, Copy, Debug)]
struct Form {
    a_in_registers: bool,
    b: Major,
}

/// The kernel; the Rust lines of its interesting statements are returned with it.
fn kernel(form: Form, bug: Bug) -> (Kernel, Lines) {
    let mut k = KernelBuilder::new("wgmma_64x32x32", Target::Sm90a);
    k.require_block(128, 1, 1);
    // bf16 elements as their bits (the A fragments pack them into b32 registers).
    let a_g = k.param_global("a", Type::U16, false);
    let b_g = k.param_global("b", Type::U16, false);
    let out = k.param_global("out", Type::F32, true);
    // A: 64 x 32 K-major, 64-byte swizzle (one block); B: 32 (N) x 32 (K) K-major, or
    // 32 (K) x 32 (N) N-major, also 64-byte swizzled.
    let a_tile = SmemTile::new(2, 64, K, Swizzle::B64);
    let b_op = match form.b {
        Major::K => MmaOperand::new(SmemTile::new(2, N, K, Swizzle::B64), Major::K),
        Major::MN => MmaOperand::new(SmemTile::new(2, K, N, Swizzle::B64), Major::MN),
    };
    let smem = k.alloc_shared_aligned("ab", Type::BF16, (a_tile.bytes() + b_op.tile.bytes()) / 2, 1024);
    let base = k.shared_base_addr(smem);
    let b_base = k.add(base, Value::u32(a_tile.bytes()));
    let t = k.thread_idx(Dim::X);
    // Stage A and B: element e of the row-major global arrays to its swizzled place.
    let stage = |k: &mut KernelBuilder, g, tile: &SmemTile, tile_base: Value, rows: u32, cols: u32| {
        for e0 in (0..rows * cols).step_by(128) {
            let e = k.add(t, Value::u32(e0));
            let row = k.div(e, Value::u32(cols));
            let col = k.rem(e, Value::u32(cols));
            let v = k.ld_global(g, e);
            let at = k.smem_tile_addr(tile, tile_base, row, col);
            k.st_raw(Space::Shared, at, 0, v);
        }
    };
    stage(&mut k, a_g, &a_tile, base, 64, K);
    // B is given as stored: N x K (K-major) or K x N.
    let (b_rows, b_cols) = if form.b == Major::K { (N, K) } else { (K, N) };
    stage(&mut k, b_g, &b_op.tile, b_base, b_rows, b_cols);
    let mut lines = Lines::default();
    if bug != Bug::NoProxyFence {
        k.fence_proxy_async(ProxySpace::SharedCta);
    }
    k.cta_sync();
    let a = k.matrix_desc(MmaElem::BF16, MmaOperand::new(a_tile, Major::K), base);
    let b: MatrixDesc = k.matrix_desc(MmaElem::BF16, b_op, b_base);
    // A's fragments, read from global through the A layout (for the register form).
    let a_regs: Vec<[Value; 4]> = (0..K / 16)
        .map(|step| {
            let regs: Vec<Value> = (0..4u32)
                .map(|reg| {
                    let halves: Vec<Value> = (0..2u32)
                        .map(|part| {
                            let row_col = |k: &mut KernelBuilder, p: u32| {
                                // arch::fragment::a_element(t, reg, part, 2) at run time.
                                let w = k.shr(t, Value::u32(5));
                                let l = k.and(t, Value::u32(31));
                                let row = k.mul(w, Value::u32(16));
                                let g = k.shr(l, Value::u32(2));
                                let row = k.add(row, g);
                                let row = k.add(row, Value::u32(8 * (reg % 2)));
                                let q = k.and(l, Value::u32(3));
                                let col = k.mul(q, Value::u32(2));
                                let col = k.add(col, Value::u32(8 * (reg / 2) + p + 16 * step));
                                let idx = k.mul(row, Value::u32(K));
                                k.add(idx, col)
                            };
                            let idx = row_col(&mut k, part);
                            k.ld_global(a_g, idx)
                        })
                        .collect();
                    let lo = k.cvt(halves[0], Type::U32);
                    let hi = k.cvt(halves[1], Type::U32);
                    let hi = k.shl(hi, Value::u32(16));
                    k.or(lo, hi)
                })
                .collect();
            [regs[0], regs[1], regs[2], regs[3]]
        })
        .collect();
    let acc = Accumulator::new(&mut k, N);
    let acc2 = Accumulator::new(&mut k, N);
    if bug != Bug::NoFence {
        lines.fence = line!() + 1;
        k.wgmma_fence();
    }
    if bug == Bug::ZeroAfterFence {
        lines.zero = line!() + 1;
        acc.zero(&mut k);
    }
    let warp = k.warp_idx();
    let issue = k.ne(warp, Value::u32(3));
    let issue = if bug == Bug::Warp3Skips { issue } else { Value::pred(true) };
    k.if_then(issue, |k| {
        for step in 0..K / 16 {
            let scale_d = Value::pred(step > 0 && bug != Bug::WaitOneOfTwo);
            let acc = if step > 0 && bug == Bug::WaitOneOfTwo { &acc2 } else { &acc };
            if form.a_in_registers {
                lines.mma = line!() + 1;
                k.wgmma_reg_a(acc, a_regs[step as usize], MmaElem::BF16, &b, 0, 16 * step, scale_d);
            } else {
                lines.mma = line!() + 1;
                k.wgmma(acc, &a, 0, &b, 0, 16 * step, scale_d);
            }
            if bug == Bug::WaitOneOfTwo {
                k.wgmma_commit_group();
            }
        }
    });
    match bug {
        Bug::NoWaitGroup => k.wgmma_commit_group(),
        Bug::WaitOneOfTwo => k.wgmma_wait_group(1),
        Bug::AsmWritesAccumulator => {
            k.wgmma_commit_group();
            let d0 = acc.get(0).as_reg().expect("an accumulator register");
            lines.asm = line!() + 1;
            k.inline_asm("mov.b32 {0}, 0f00000000;", &[], &[d0], false);
            k.wgmma_wait_group(0);
        }
        Bug::Ex2ReadsAccumulator => {
            k.wgmma_commit_group();
            lines.early_read = line!() + 1;
            let _early = k.exp2(acc.get(0));
            k.wgmma_wait_group(0);
        }
        _ => {
            k.wgmma_commit_group();
            k.wgmma_wait_group(0);
        }
    }
    // Register i holds (row, col) of arch::fragment::d_element: its thread's origin plus the
    // register's offset.
    let (row0, col0) = k.fragment_origin();
    for i in 0..N / 2 {
        let (dr, dc) = d_register_offset(i);
        let row = k.add(row0, Value::u32(dr));
        let col = k.add(col0, Value::u32(dc));
        let idx = k.mad(row, Value::u32(N), col);
        lines.epilogue = line!() + 1;
        k.st_global(out, idx, acc.get(i as usize));
        if bug == Bug::WaitOneOfTwo {
            let idx2 = k.add(idx, Value::u32(64 * N));
            lines.second = line!() + 1;
            k.st_global(out, idx2, acc2.get(i as usize));
        }
    }
    (k.finish().unwrap(), lines)
}

#[derive(Default, Debug)]
struct Lines {
    fence: u32,
    zero: u32,
    mma: u32,
    epilogue: u32,
    second: u32,
    asm: u32,
    early_read: u32,
}

fn inputs() -> (Vec<bf16>, Vec<bf16>) {
    use rand::{Rng, SeedableRng};
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut v = |n: u32| (0..n).map(|_| bf16::from_f32(r.random_range(-1.0f32..1.0))).collect::<Vec<_>>();
    (v(64 * K), v(N * K))
}

/// A simulation: the output, the findings (`Err` when there are errors), the kernel's lines
/// and its inputs.
type Outcome = (Vec<f32>, Result<(), Vec<Finding>>, Lines, Vec<bf16>, Vec<bf16>);

fn run(form: Form, bug: Bug) -> Outcome {
    let (k, lines) = kernel(form, bug);
    let dev = Device::sim(SimConfig::default());
    let (a, b) = inputs();
    let bits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    let (ga, gb) = (dev.upload(&bits(&a)).unwrap(), dev.upload(&bits(&b)).unwrap());
    let out = dev.alloc::<f32>((2 * 64 * N) as usize).unwrap();
    let r = dev.launch(&k, LaunchConfig::linear(1, 128), &[Arg::buffer(&ga), Arg::buffer(&gb), Arg::buffer(&out)]);
    let result = match r {
        Ok(_) => Ok(()),
        Err(RuntimeError::Simulation(r)) => Err(r.findings),
        Err(e) => panic!("{e}"),
    };
    (dev.download(&out).unwrap(), result, lines, a, b)
}

/// `D[i][j] = sum_k A[i][k] * B(k, j)` in f32, k in order (what the simulator's tensor core
/// does; the GPU's adder may round differently).
fn reference(a: &[bf16], b: &[bf16], b_major: Major, ks: std::ops::Range<u32>) -> Vec<f32> {
    let mut d = vec![0f32; (64 * N) as usize];
    for i in 0..64 {
        for j in 0..N {
            let mut acc = 0f32;
            for kk in ks.clone() {
                let bv = match b_major {
                    Major::K => b[(j * K + kk) as usize],
                    Major::MN => b[(kk * N + j) as usize],
                };
                acc += a[(i * K + kk) as usize].to_f32() * bv.to_f32();
            }
            d[(i * N + j) as usize] = acc;
        }
    }
    d
}

fn only(findings: &[Finding], c: Category) -> Vec<&Finding> {
    findings.iter().filter(|f| f.category == c).collect()
}

fn all_text(f: &[Finding]) -> String {
    f.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n\n")
}

#[test]
fn results_are_the_f32_sums_in_k_order_bit_for_bit() {
    for form in [
        Form { a_in_registers: false, b: Major::K },
        Form { a_in_registers: false, b: Major::MN },
        Form { a_in_registers: true, b: Major::K },
        Form { a_in_registers: true, b: Major::MN },
    ] {
        let (d, result, _, a, b) = run(form, Bug::None);
        result.unwrap_or_else(|f| panic!("{form:?}:\n{}", all_text(&f)));
        // B as the kernel saw it: given N x K for K-major, K x N otherwise (same values here,
        // read the other way).
        let want = reference(&a, &b, form.b, 0..K);
        assert_eq!(d[..want.len()], want, "{form:?}");
        assert!(want.iter().any(|&x| x.abs() > 1.0), "not vacuous");
    }
}

#[test]
fn a_missing_wgmma_fence_is_reported_at_the_wgmma() {
    let form = Form { a_in_registers: false, b: Major::K };
    let (_, result, lines, _, _) = run(form, Bug::NoFence);
    let f = result.expect_err("no fence");
    let fence = only(&f, Category::MissingWgmmaFence);
    assert!(!fence.is_empty(), "{}", all_text(&f));
    assert_eq!(fence[0].loc.unwrap().line, lines.mma, "{}", fence[0]);
    assert!(fence[0].message.contains("first wgmma.mma_async has no wgmma.fence"), "{}", fence[0]);
    // Zeroing the accumulator after the fence is an ordinary access the fence must follow.
    let (_, result, lines, _, _) = run(form, Bug::ZeroAfterFence);
    let f = result.expect_err("zero after the fence");
    let fence = only(&f, Category::MissingWgmmaFence);
    assert!(!fence.is_empty(), "{}", all_text(&f));
    assert_eq!(fence[0].loc.unwrap().line, lines.mma, "{}", fence[0]);
    assert!(fence[0].message.contains(&format!("sim_wgmma.rs:{}", lines.zero)), "{}", fence[0]);
}

#[test]
fn reading_the_accumulator_before_wait_group_is_reported_at_the_read() {
    let (_, result, lines, _, _) = run(Form { a_in_registers: false, b: Major::K }, Bug::NoWaitGroup);
    let f = result.expect_err("no wait_group");
    let race = only(&f, Category::WgmmaRegisterRace);
    assert!(!race.is_empty(), "{}", all_text(&f));
    assert_eq!(race[0].loc.unwrap().line, lines.epilogue, "{}", race[0]);
    assert!(race[0].message.contains(&format!("sim_wgmma.rs:{}", lines.mma)), "{}", race[0]);
}

#[test]
fn inline_ptx_writing_an_in_flight_accumulator_is_reported_at_the_asm() {
    let (_, result, lines, _, _) = run(Form { a_in_registers: false, b: Major::K }, Bug::AsmWritesAccumulator);
    let f = result.expect_err("an asm output races the wgmma");
    let race = only(&f, Category::WgmmaRegisterRace);
    assert!(!race.is_empty(), "{}", all_text(&f));
    assert_eq!(race[0].loc.unwrap().line, lines.asm, "{}", race[0]);
    assert!(race[0].message.contains(&format!("sim_wgmma.rs:{}", lines.mma)), "{}", race[0]);
    assert!(race[0].message.contains("element (0, 0) of lane 0's accumulator tile"), "{}", race[0]);
}

#[test]
fn a_float_function_reading_an_in_flight_accumulator_is_reported_at_the_read() {
    let (_, result, lines, _, _) = run(Form { a_in_registers: false, b: Major::K }, Bug::Ex2ReadsAccumulator);
    let f = result.expect_err("ex2 reads the accumulator before wait_group");
    let race = only(&f, Category::WgmmaRegisterRace);
    assert!(!race.is_empty(), "{}", all_text(&f));
    assert_eq!(race[0].loc.unwrap().line, lines.early_read, "{}", race[0]);
    assert!(race[0].message.contains(&format!("sim_wgmma.rs:{}", lines.mma)), "{}", race[0]);
}

#[test]
fn generic_stores_read_by_wgmma_need_a_proxy_fence() {
    let (_, result, _, _, _) = run(Form { a_in_registers: false, b: Major::K }, Bug::NoProxyFence);
    let f = result.expect_err("no fence.proxy.async");
    let proxy = only(&f, Category::ProxyFence);
    assert!(!proxy.is_empty(), "{}", all_text(&f));
    assert!(proxy[0].message.contains("wgmma.mma_async"), "{}", proxy[0]);
}

#[test]
fn a_wgmma_one_warp_never_issues_deadlocks_with_the_reason() {
    let (_, result, _, _, _) = run(Form { a_in_registers: false, b: Major::K }, Bug::Warp3Skips);
    let f = result.expect_err("warp 3 never issues");
    let dl = only(&f, Category::Deadlock);
    assert!(!dl.is_empty(), "{}", all_text(&f));
    assert!(
        dl.iter().any(|d| d.message.contains("wgmma.wait_group 0") && d.message.contains("warp(s) 3")),
        "{}",
        all_text(&f)
    );
}

#[test]
fn wait_group_1_retires_all_but_the_newest_group() {
    let form = Form { a_in_registers: false, b: Major::K };
    let (d, result, lines, a, b) = run(form, Bug::WaitOneOfTwo);
    let f = result.expect_err("the second group is not retired");
    let race = only(&f, Category::WgmmaRegisterRace);
    // Only the second accumulator's reads are early; the first group's result is there.
    assert!(!race.is_empty() && race.iter().all(|r| r.loc.unwrap().line == lines.second), "{}", all_text(&f));
    assert_eq!(d[..(64 * N) as usize], reference(&a, &b, Major::K, 0..16));
}
