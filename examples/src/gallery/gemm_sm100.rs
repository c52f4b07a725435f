//! The Blackwell GEMM (`gemm_sm100.rs`) in the gallery, 1-CTA and 2-CTA. Its kernels are
//! sm_100a code whatever target is asked for (`kernels` ignores it): the simulator runs them;
//! a GPU of another architecture skips the example ("needs sm_100a"), never a pass.
//!
//! The inputs are random in {-1, 0, 1} and K is at most 256, so every element of C is an
//! integer in [-256, 256]: exact in bf16 and in f32 whatever the accumulation order. The
//! check compares every element bit for bit, on the simulator and on a B200 alike.

use crate::gemm::GemmShape;
use crate::gemm_sm100::{gemm_sm100_kernel, grid, launch_config, Sm100Config, BLOCK_M};
use half::bf16;
use phaser::problem::{random_u32, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, RuntimeError, Swizzle};
use phaser::Kernel;

/// 128 x 128 tiles (256 x 128 per pair), 4 stages, 2 accumulators.
pub fn config(two_cta: bool) -> Sm100Config {
    Sm100Config { block_n: 128, ..Sm100Config::new(two_cta) }
}

fn kernel(two_cta: bool) -> phaser::codegen::Result<Kernel> {
    gemm_sm100_kernel(&config(two_cta))
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "gemm_sm100",
            about: "Blackwell bf16 GEMM: TMA producer, tcgen05.mma into tensor memory, commit-driven stage and \
                    accumulator pipelines, TMEM->bf16->TMA-store epilogue (sm_100a; simulator or B200)",
            kernels: |_| Ok(vec![kernel(false)?]),
            setup: |dev, size, seed| setup(dev, size, seed, false),
            check,
        },
        Example {
            name: "gemm_sm100_2cta",
            about: "the Blackwell GEMM with .cta_group::2: a CTA pair issues M = 256 MMAs over both CTAs' shared \
                    and tensor memory (sm_100a; simulator or B200)",
            kernels: |_| Ok(vec![kernel(true)?]),
            setup: |dev, size, seed| setup(dev, size, seed, true),
            check,
        },
    ]
}

/// What the check needs.
pub struct Host {
    pub shape: GemmShape,
    pub a: Vec<bf16>,
    pub b: Vec<bf16>,
    pub c: phaser::problem::BufferId<bf16>,
}

/// Random elements of {-1, 0, 1}.
fn ternary(n: usize, seed: u64) -> Vec<bf16> {
    random_u32(n, seed).into_iter().map(|x| bf16::from_f32((x % 3) as f32 - 1.0)).collect()
}

pub fn setup(dev: &Device, size: Size, seed: u64, two_cta: bool) -> Result<Problem, RuntimeError> {
    setup_with(dev, size, seed, two_cta, kernel(two_cta)?)
}

/// The problem of [`setup`] run by `kernel` (the builder's, or the DSL version of it: both take
/// the same tensor maps, arguments and launch).
pub fn setup_with(dev: &Device, size: Size, seed: u64, two_cta: bool, kernel: Kernel) -> Result<Problem, RuntimeError> {
    let cfg = config(two_cta);
    let pair = cfg.ctas();
    // Small: one CTA (pair) walks three tiles, so the stage and accumulator rings wrap.
    // Quick: ragged in every dimension over two CTAs (pairs). Full: GPU-sized, K = 256.
    let (shape, ctas) = match size {
        Size::Small => (GemmShape::new(3 * cfg.tile_m(), 128, 128), pair),
        Size::Quick => (GemmShape::new(BLOCK_M * pair + 72, 200, 104), 2 * pair),
        Size::Full => {
            let shape = GemmShape::new(4096, 4096, 256);
            let ctas = grid(&cfg, &shape, dev.sm_count()?);
            (shape, ctas)
        }
    };
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let a = ternary(m * k, seed);
    let b = ternary(n * k, seed ^ 0x5bd1_e995);
    let mut p = Problem::new(seed);
    let ga = p.input(dev, &a)?;
    let gb = p.input(dev, &b)?;
    let gc = p.output(dev, m * n, crate::gemm::POISON)?;
    let (m64, n64, k64) = (m as u64, n as u64, k as u64);
    let ma = p.tensor_map(dev, ga, &[k64, m64], &[crate::gemm::BLOCK_K, BLOCK_M], Swizzle::B128)?;
    let mb = p.tensor_map(dev, gb, &[k64, n64], &[crate::gemm::BLOCK_K, cfg.b_rows()], Swizzle::B128)?;
    let mc = p.tensor_map(dev, gc, &[n64, m64], &[64, 32], Swizzle::B128)?;
    // The arguments in the kernel's order (as `gemm_sm100::args` makes them).
    let launch = launch_config(&cfg, ctas);
    let launch = launch.with_dynamic_shared(cfg.dynamic_smem_bytes().max(kernel.declared_dynamic_bytes()));
    p.launch(
        kernel,
        launch,
        [ma.into(), mb.into(), mc.into(), shape.m.into(), shape.n.into(), shape.k.into()],
        [gc.into()],
    );
    p.set_host(Host { shape, a, b, c: gc });
    Ok(p)
}

/// The exact product, row-major, computed once per problem ([`Problem::expected`]: the suite
/// reruns a check per corrupted output, and the product is most of its time).
struct ExactC(Vec<f32>);

fn expected(p: &Problem) -> std::rc::Rc<ExactC> {
    p.expected(|| {
        let h: &Host = p.host();
        let (m, n, k) = (h.shape.m as usize, h.shape.n as usize, h.shape.k as usize);
        let at = |i: usize, j: usize| (0..k).map(|kk| h.a[i * k + kk].to_f32() * h.b[j * k + kk].to_f32()).sum();
        ExactC((0..m * n).map(|x| at(x / n, x % n)).collect())
    })
}

/// Every element of C equals the exact product, bit for bit.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let got = outputs.get(0, h.c);
    let (m, n) = (h.shape.m as usize, h.shape.n as usize);
    let want = expected(p);
    let mut bad = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let w = want.0[i * n + j];
            if got[i * n + j].to_bits() != bf16::from_f32(w).to_bits() {
                bad.push((i, j, got[i * n + j].to_f32(), w));
            }
        }
    }
    if bad.is_empty() {
        Outcome::new(true, format!("{} (seed {}): all {} elements exact", h.shape, p.seed, m * n))
    } else {
        let (i, j, g, w) = bad[0];
        Outcome::new(
            false,
            format!("{} (seed {}): {} of {} wrong; C[{i}][{j}] = {g}, want {w}", h.shape, p.seed, bad.len(), m * n),
        )
    }
}
