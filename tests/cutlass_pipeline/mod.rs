//! CUTLASS's sm_90 pipeline unit tests (`test/unit/pipeline/` of NVIDIA/cutlass) ported to
//! the DSL, one file per CUTLASS file, with CUTLASS's matrix: each file's cluster shapes and
//! stage counts (its `TEST`s, in order) times the iteration counts its testbed draws
//! (`testbed.h`: five `rand() % 1000 + 1`) plus 1, S and S + 1.
//!
//! `tests/sim_cutlass_pipeline.rs` runs them in the simulator (a representative subset by
//! default, every case with `PHASER_CUTLASS_FULL=1`), `tests/gpu_cutlass_pipeline.rs` on the
//! GPU. CUTLASS's kernels only have to finish; each port also writes what every CTA saw (its
//! waits, its states' final stage and phase) and the host checks it.
#![allow(dead_code)] // each test binary runs some of the cases

pub mod pipeline_async;
pub mod sequence_barrier;
pub mod tma_async;
pub mod tma_async_ws;
pub mod tma_async_ws_persistent;

use phaser::runtime::sim::SimReport;
pub use phaser::runtime::LaunchReport;
pub use phaser::Device;

/// glibc's `rand()` from its default seed (1), as CUTLASS's testbed calls it: the TYPE_3
/// additive generator (`random_r.c`), so the iteration counts are the ones CUTLASS's binary
/// draws on Linux.
pub struct GlibcRand {
    r: Vec<u32>,
}

impl GlibcRand {
    pub fn new(seed: u32) -> GlibcRand {
        let mut r: Vec<u32> = Vec::with_capacity(400);
        r.push(seed);
        for i in 1..31 {
            // 16807 * r mod (2^31 - 1), on the signed value as glibc computes it.
            let prev = r[i - 1] as i32 as i64;
            let mut v = (16807 * prev) % 2147483647;
            if v < 0 {
                v += 2147483647;
            }
            r.push(v as u32);
        }
        for i in 31..34 {
            r.push(r[i - 31]);
        }
        let mut g = GlibcRand { r };
        for _ in 0..310 {
            g.step();
        }
        g
    }

    fn step(&mut self) -> u32 {
        let n = self.r.len();
        let v = self.r[n - 31].wrapping_add(self.r[n - 3]);
        self.r.push(v);
        v >> 1
    }

    /// The next `rand()`.
    pub fn next(&mut self) -> u32 {
        self.step()
    }
}

/// One CUTLASS `TEST`: a cluster shape (`GemmShape<M, N, 1>`) and a stage count; for
/// `sequence_barrier.cu`, `m` is the group count (`Length`) and `stages` the depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub m: u32,
    pub n: u32,
    pub stages: u32,
}

pub const fn cfg(m: u32, n: u32, stages: u32) -> Config {
    Config { m, n, stages }
}

/// One launch of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub cfg: Config,
    pub iterations: u32,
}

/// Every case of a file: its configurations in order, each with the five draws its testbed
/// takes (from one generator per file, in the file's order, as one test binary per file
/// would draw them) plus 1, S and S + 1 (each count once).
pub fn matrix(configs: &[Config]) -> Vec<Case> {
    let mut rand = GlibcRand::new(1);
    let mut cases = Vec::new();
    for &cfg in configs {
        let mut counts: Vec<u32> = (0..5).map(|_| rand.next() % 1000 + 1).collect();
        counts.extend([1, cfg.stages, cfg.stages + 1]);
        let mut seen = Vec::new();
        for n in counts {
            if !seen.contains(&n) {
                seen.push(n);
                cases.push(Case { cfg, iterations: n });
            }
        }
    }
    cases
}

/// The subset CI runs: for each listed configuration, 1, S, S + 1 and the file's first
/// draw capped at `cap` (the simulator's time grows with the count; the protocol's corner
/// cases are the small counts and the wrap at S).
pub fn subset(configs: &[Config], cap: u32) -> Vec<Case> {
    let first_draw = GlibcRand::new(1).next() % 1000 + 1;
    let mut cases = Vec::new();
    for &cfg in configs {
        let mut seen = Vec::new();
        for n in [1, cfg.stages, cfg.stages + 1, first_draw.min(cap)] {
            if !seen.contains(&n) {
                seen.push(n);
                cases.push(Case { cfg, iterations: n });
            }
        }
    }
    cases
}

/// A PipelineState's stage and phase after `n` advances from `(0, phase0)`, encoded as the
/// kernels write them: `stage * 2 + phase`.
pub fn state_after(n: u64, stages: u32, phase0: u32) -> u32 {
    let s = stages as u64;
    ((n % s) * 2) as u32 + (phase0 ^ ((n / s) % 2) as u32)
}

/// The simulator's report of a launch, if it ran there: every finding must be a warning.
pub fn sim_warnings(report: &LaunchReport) -> Vec<String> {
    report.sim.as_ref().map(|r: &SimReport| r.findings.iter().map(|f| f.to_string()).collect()).unwrap_or_default()
}

/// A case's outcome: `Err` names the case and what went wrong.
pub type Outcome = Result<LaunchReport, String>;

pub fn fail(case: &Case, what: impl std::fmt::Display) -> String {
    format!("{case:?}: {what}")
}

/// Downloads `out` and compares it with `want`, naming the first differing entry.
pub fn expect_out(dev: &Device, case: &Case, out: &phaser::Buffer<u32>, want: &[u32]) -> Result<(), String> {
    let got = dev.download(out).map_err(|e| fail(case, e))?;
    if got != want {
        let i = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(0);
        return Err(fail(
            case,
            format!("out[{i}] = {}, expected {} (got {got:?}, expected {want:?})", got[i], want[i]),
        ));
    }
    Ok(())
}

#[test]
fn glibc_rand_gives_its_documented_first_values() {
    // glibc's first rand() values from the default seed (`srand(1)`).
    let mut g = GlibcRand::new(1);
    let first: Vec<u32> = (0..5).map(|_| g.next()).collect();
    assert_eq!(first, [1804289383, 846930886, 1681692777, 1714636915, 1957747793]);
}
