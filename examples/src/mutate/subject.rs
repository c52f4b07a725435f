//! The kernels the suite mutates: gallery examples' launches, run through the example's own
//! setup at [`Size::Small`]. Adding a subject is one line in [`subjects`].

use crate::gallery::{self, explore_problem, simulate_problem, Problem, Size};
use phaser::codegen::Kernel;
use phaser::runtime::sim::{ExploreReport, SimConfig, SimReport};
use phaser::runtime::{Device, RuntimeError};

/// A kernel of a gallery example that the suite mutates: the example's own setup (at
/// [`Size::Small`]) provides the launch, and a mutant is launched in place of the kernel.
#[derive(Clone, Copy, Debug)]
pub struct Subject {
    /// The kernel's name (also what the mutants name).
    pub name: &'static str,
    /// The gallery example whose problem launches it.
    pub example: &'static str,
}

/// The inputs' seed (the protocol does not depend on the data; a fixed seed keeps the table
/// reproducible).
const SEED: u64 = 0x6d75_7461;

impl Subject {
    /// The example's small problem on `dev`, reduced to the (first) launch of this kernel;
    /// returns it with that launch's kernel.
    fn problem(&self, dev: &Device) -> Result<(Problem, Kernel), RuntimeError> {
        let e = gallery::find(self.example).unwrap_or_else(|| panic!("no gallery example `{}`", self.example));
        let p = (e.setup)(dev, Size::Small, SEED)?;
        let i = p.launch_of(self.name).unwrap_or_else(|| {
            panic!("example `{}` launches no kernel `{}` at the small size", self.example, self.name)
        });
        let p = p.only_launch(i);
        let k = p.launches[0].kernel.clone();
        Ok((p, k))
    }

    /// The unmutated kernel.
    pub fn kernel(&self) -> Result<Kernel, RuntimeError> {
        Ok(self.problem(&Device::sim(SimConfig::default()))?.1)
    }

    /// Simulate `k` (this kernel or a mutant of it) under `sc` with the example's inputs.
    pub fn simulate(&self, k: &Kernel, sc: &SimConfig) -> Result<SimReport, RuntimeError> {
        let dev = Device::sim(sc.clone());
        let (p, _) = self.problem(&dev)?;
        let mut p = p.with_kernel(0, k.clone());
        Ok(simulate_problem(&dev, &mut p, sc)?.remove(0))
    }

    /// Explore `k` exhaustively (`Device::explore` under `sc`'s bounds) with the example's inputs.
    pub fn explore(&self, k: &Kernel, sc: &SimConfig) -> Result<ExploreReport, RuntimeError> {
        let dev = Device::sim(sc.clone());
        let (p, _) = self.problem(&dev)?;
        let mut p = p.with_kernel(0, k.clone());
        Ok(explore_problem(&dev, &mut p)?.remove(0))
    }
}

/// Every subject: `s(kernel, example)`. The GEMM joins with one such line once the simulator
/// runs wgmma and the GEMM is a gallery example (its `setup` launches it at `Size::Small`).
pub fn subjects() -> Vec<Subject> {
    let s = |name, example| Subject { name, example };
    vec![
        s("seed_thread_arrive_wait", "seed_thread_arrive_wait"),
        s("seed_producer_consumer", "seed_producer_consumer"),
        s("seed_phase_flip", "seed_phase_flip"),
        s("dsl_seed_thread_arrive_wait", "dsl_seed_thread_arrive_wait"),
        s("dsl_seed_producer_consumer", "dsl_seed_producer_consumer"),
        s("dsl_seed_phase_flip", "dsl_seed_phase_flip"),
        s("dsl_phase_tma", "dsl_phase_tma"),
        s("phase_tma_table", "phase_tma_table"),
        s("fe_pipeline", "fe_pipeline"),
        s("bulk_pipeline", "bulk_pipeline"),
        s("tma_two_stage", "tma_two_stage"),
        s("stream_axpb_s2", "stream_axpb"),
        s("dsl_pipeline_axpb", "dsl_pipeline_axpb"),
        s("pipeline_async_dsl", "pipeline_async_dsl"),
        s("pipeline_multicast_dsl", "pipeline_multicast_dsl"),
        s("cluster_multicast_x2", "cluster_multicast"),
        s("cluster_multicast_x4", "cluster_multicast"),
        s("cp_async_mbarrier", "cp_async_mbarrier"),
        s("cp_async_mbarrier_noinc", "cp_async_mbarrier"),
        s("attention_dsl", "attention_dsl"),
    ]
}

/// The subject named `name`.
pub fn subject(name: &str) -> Option<Subject> {
    subjects().into_iter().find(|s| s.name == name)
}
