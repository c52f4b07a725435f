//! A user crate, written against the README only: one kernel, registered with its host side
//! (inputs from a seed, a CPU reference), and the `phaser` CLI over it. `cargo run -p
//! phaser-user-crate -- check` runs it in the simulator with the protocol checker.
//!
//! Beside it, two of the gallery's examples compiled from the gallery's own files, unchanged:
//! their host sides use only the public `phaser` API (`phaser::problem`) and `half`, so an
//! example is copied into a crate of one's own as it is, and registered with
//! `phaser::problems!`.

use phaser::registry::Size;
use phaser::runtime::LaunchReport;
use phaser::{Device, LaunchConfig, RuntimeError, Runnable};

/// `y[i] = a * x[i] + y[i]`, one thread per element, staged through shared memory behind an
/// mbarrier phase: thread 0 arrives once every thread stored its element.
#[phaser::kernel(target = "sm_90a")]
fn staged_saxpy(y: &mut [f32], x: &[f32], a: f32, #[comptime] N: u32) {
    let bar = T.alloc_barriers(1);
    let stage = T.alloc_shared::<f32>([N]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    stage[tid] = a * x[tid];
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    }
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
    y[tid] = stage[tid] + y[tid];
}

struct StagedSaxpy;

/// The problem: `N` elements, `a`, and the inputs.
struct Input {
    n: u32,
    a: f32,
    x: Vec<f32>,
    y: Vec<f32>,
}

impl Runnable for StagedSaxpy {
    const NAME: &'static str = "staged_saxpy";
    const ABOUT: &'static str = "y = a*x + y staged through shared memory behind one mbarrier phase";
    type Input = Input;
    type Output = Vec<f32>;

    fn kernels(target: phaser::Target) -> Result<Vec<phaser::Kernel>, phaser::codegen::CodegenError> {
        Ok(vec![staged_saxpy::build(target, 128)?])
    }

    fn setup(size: Size, seed: u64) -> Input {
        let n = match size {
            Size::Small => 32,
            Size::Quick | Size::Full => 128,
        };
        // A small deterministic generator: the inputs follow from the seed alone.
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 1000) as f32 / 100.0
        };
        let x = (0..n).map(|_| next()).collect();
        let y = (0..n).map(|_| next()).collect();
        Input { n, a: 1.5, x, y }
    }

    fn launch(dev: &Device, input: &Input) -> Result<(Vec<f32>, LaunchReport), RuntimeError> {
        let x = dev.upload(&input.x)?;
        let mut y = dev.upload(&input.y)?;
        let report = staged_saxpy::launch(dev, LaunchConfig::linear(1, input.n), &mut y, &x, input.a, input.n)?;
        Ok((dev.download(&y)?, report))
    }

    fn check(input: &Input, output: &Vec<f32>) -> Result<String, String> {
        for (i, got) in output.iter().enumerate() {
            let want = input.a * input.x[i] + input.y[i];
            if *got != want {
                return Err(format!("y[{i}] = {got}, expected {want}"));
            }
        }
        Ok(format!("{} elements match the CPU reference", output.len()))
    }
}

phaser::runnable!(StagedSaxpy);

// Only what the examples register is used here (the gallery's tests and benches use the rest).
#[allow(dead_code)]
#[path = "../../src/gallery/gemm_dsl.rs"]
mod gemm_dsl;
#[allow(dead_code)]
#[path = "../../src/gallery/attention_dsl.rs"]
mod attention_dsl;

phaser::problems!(gemm_dsl::examples, attention_dsl::examples);

fn main() -> std::process::ExitCode {
    phaser::cli::main()
}
