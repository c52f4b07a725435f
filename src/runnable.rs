//! A runnable kernel in a few lines: a user crate implements [`Runnable`] (inputs from a
//! seed, the launch, a check against a CPU reference) and registers it with
//! [`crate::runnable!`]; `phaser check`, `phaser run`, `phaser bench` and `phaser diff` then
//! run it like the gallery's examples.

use crate::registry::{Example, ExampleRun, Size};
use phaser_codegen::{CodegenError, Kernel, Target};
use phaser_runtime::{Device, Elem, LaunchReport, RuntimeError};

/// A kernel (or a few) with its host side, runnable by the `phaser` CLI.
pub trait Runnable: 'static {
    /// The name `phaser check --only NAME` selects.
    const NAME: &'static str;
    /// One line for `phaser list`.
    const ABOUT: &'static str;
    /// The host inputs.
    type Input;
    /// What comes back from the device (e.g. `Vec<f32>`, or a tuple of them).
    type Output: Outputs;

    /// The kernels the run launches, for `target` (what `phaser emit` prints).
    fn kernels(target: Target) -> Result<Vec<Kernel>, CodegenError>;
    /// Inputs of a problem of `size`, made deterministically from `seed`.
    fn setup(size: Size, seed: u64) -> Self::Input;
    /// Upload, launch and download on `dev`: the outputs and the last launch's report.
    fn launch(dev: &Device, input: &Self::Input) -> Result<(Self::Output, LaunchReport), RuntimeError>;
    /// Compare with a CPU reference: `Ok(what was checked)` or `Err(what differed)`.
    fn check(input: &Self::Input, output: &Self::Output) -> Result<String, String>;
}

/// Outputs a run digests (equal digests: bit-identical outputs, what `phaser diff` compares).
pub trait Outputs {
    /// Fold every element's bits into an FNV-1a state.
    fn fold(&self, state: u64) -> u64;
}

impl<T: Elem> Outputs for Vec<T> {
    fn fold(&self, mut h: u64) -> u64 {
        for x in self {
            for b in x.to_bits().to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    }
}

impl<A: Outputs, B: Outputs> Outputs for (A, B) {
    fn fold(&self, h: u64) -> u64 {
        self.1.fold(self.0.fold(h))
    }
}

impl<A: Outputs, B: Outputs, C: Outputs> Outputs for (A, B, C) {
    fn fold(&self, h: u64) -> u64 {
        self.2.fold(self.1.fold(self.0.fold(h)))
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

impl Example {
    /// The registry's example for `R`: a device that cannot run `R`'s kernels skips it.
    pub fn of<R: Runnable>() -> Example {
        Example {
            name: R::NAME.to_owned(),
            about: R::ABOUT.to_owned(),
            kernels: Box::new(R::kernels),
            run: Box::new(|dev, size, seed| run::<R>(dev, size, seed)),
        }
    }
}

fn run<R: Runnable>(dev: &Device, size: Size, seed: u64) -> Result<ExampleRun, RuntimeError> {
    let input = R::setup(size, seed);
    let (output, report) = match R::launch(dev, &input) {
        Ok(r) => r,
        Err(e) => match crate::registry::skip_reason(&e) {
            Some(why) => return Ok(ExampleRun { skipped: true, detail: why, ..Default::default() }),
            None => return Err(e),
        },
    };
    let (passed, detail) = match R::check(&input, &output) {
        Ok(d) => (true, d),
        Err(d) => (false, d),
    };
    Ok(ExampleRun {
        passed,
        skipped: false,
        detail,
        digest: output.fold(FNV_OFFSET),
        elapsed: report.elapsed,
        findings: report.sim.iter().flat_map(|r| &r.findings).map(|f| f.to_string()).collect(),
        // A runnable's check decides pass/fail; `phaser diff` compares its digests bit for bit.
        approximate: None,
    })
}

/// Register runnable kernels (types implementing [`Runnable`]) with the `phaser` CLI:
/// `phaser::runnable!(MyKernel, MyOtherKernel);` at the crate's top level.
#[macro_export]
macro_rules! runnable {
    ($($t:ty),+ $(,)?) => {
        $crate::registry::submit! {
            $crate::registry::Examples({
                fn __phaser_runnables() -> ::std::vec::Vec<$crate::registry::Example> {
                    ::std::vec![$($crate::registry::Example::of::<$t>()),+]
                }
                __phaser_runnables
            })
        }
    };
}
