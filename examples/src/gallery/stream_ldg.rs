//! `y = a*x + b` the plain way, written in the DSL: no shared memory, no barriers, no TMA.
//! Each CTA of [`THREADS`] threads takes chunks of `VECS * THREADS * 4` floats; thread `t`
//! loads the 16-byte vectors `4t, 4t + 4 * THREADS, ...` of the chunk with `ld.global.nc.v4`
//! (all `VECS` of them before any use, so they are in flight together), computes
//! `fma(a, x, b)` and writes each vector back with `st.global.v4`. The last partial vector
//! goes element by element. A warp's vector accesses cover 512 consecutive bytes: fully
//! coalesced.
//!
//! This is the shape of Triton's `a*x+b` (`bench/stream_triton.py`: BLOCK = 1024 with 4 warps
//! is `VECS = 2`), which the H200 measured at 98.6% of the copy where the TMA pipeline
//! (`stream_axpb`) stays at ~96% (`bench/stream.md`): with one chunk per CTA the grid has
//! hundreds of thousands of small CTAs, 16 resident per SM, and the hardware's block
//! scheduler balances the tail. [`LdgConfig`] also gives a persistent grid-stride variant.

use super::stream_plan::{Plan, PlanArg, Variant};
use phaser::codegen::{CodegenError, Kernel, Target};
use phaser::problem::{Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, RuntimeError};

/// Threads per CTA (4 warps, like Triton's `num_warps = 4`).
pub const THREADS: u32 = 128;
/// The vectors per thread and chunk a configuration may ask for.
pub const VECS: [u32; 4] = [1, 2, 4, 8];

#[phaser::kernel(target = "sm_90a")]
pub fn stream_ldg(x: &[f32], y: &mut [f32], a: f32, b: f32, n: u32, #[comptime] VECS: u32) {
    T.require_block(THREADS, 1, 1);
    let chunk = VECS * THREADS * 4;
    let first = T.thread_idx() * 4;
    let step = T.grid_dim() * chunk;
    let mut v = T.registers::<f32>([VECS, 4]);
    let mut base = T.block_idx() * chunk;
    while base < n {
        // Every load of the chunk before any store: VECS 16-byte loads per thread in flight.
        #[unroll]
        for j in 0..VECS {
            let i = base + j * THREADS * 4 + first;
            if i + 4 <= n {
                let q = T.ld.nc_v4(x, i);
                #[unroll]
                for e in 0..4 {
                    v[j][e] = q[e];
                }
            } else {
                #[unroll]
                for e in 0..4 {
                    if i + e < n {
                        v[j][e] = T.ld.nc(x, i + e);
                    }
                }
            }
        }
        #[unroll]
        for j in 0..VECS {
            let i = base + j * THREADS * 4 + first;
            if i + 4 <= n {
                T.st.v4(y, i, T.mad(a, v[j][0], b), T.mad(a, v[j][1], b), T.mad(a, v[j][2], b), T.mad(a, v[j][3], b));
            } else {
                #[unroll]
                for e in 0..4 {
                    if i + e < n {
                        y[i + e] = T.mad(a, v[j][e], b);
                    }
                }
            }
        }
        base += step;
    }
}

/// A `stream_ldg` launch: vectors per thread and the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LdgConfig {
    /// 16-byte vectors per thread and chunk (the chunk is `vecs * THREADS * 4` floats).
    pub vecs: u32,
    /// `None`: one CTA per chunk (Triton's grid). `Some(c)`: a persistent grid of `c` CTAs per
    /// SM, each striding over the chunks.
    pub ctas_per_sm: Option<u32>,
}

impl LdgConfig {
    /// Floats one CTA handles per step.
    pub fn chunk(&self) -> u32 {
        self.vecs * THREADS * 4
    }
    /// `stream_ldg_v{vecs}`, then `_p{c}` for a persistent grid of `c` CTAs per SM.
    pub fn name(&self) -> String {
        match self.ctas_per_sm {
            None => format!("stream_ldg_v{}", self.vecs),
            Some(c) => format!("stream_ldg_v{}_p{c}", self.vecs),
        }
    }
    /// Why this configuration cannot stream `n` floats, if it cannot: the kernel indexes in
    /// 32 bits, and `base + grid * chunk` must not wrap.
    pub fn problem(&self, n: u64) -> Option<String> {
        if !VECS.contains(&self.vecs) {
            return Some(format!("{}: {} vectors per thread; one of {VECS:?}", self.name(), self.vecs));
        }
        if self.ctas_per_sm == Some(0) {
            return Some(format!("{}: a persistent grid needs at least one CTA per SM", self.name()));
        }
        let limit = (u32::MAX as u64 - 2 * self.chunk() as u64) / 2;
        (n > limit).then(|| format!("{}: {n} elements; 32-bit indexing takes at most {limit}", self.name()))
    }
    /// `stream_ldg` specialized for `vecs`, its entry named [`Self::name`] so that profiles
    /// (`ncu -k`) tell the configurations apart.
    pub fn kernel(&self, target: Target) -> Result<Kernel, CodegenError> {
        let mut kernel = stream_ldg::build(target, self.vecs)?.into_parts();
        kernel.name = self.name();
        kernel.finish()
    }
    /// The launch over `n` floats on a device of `sm_count` SMs.
    pub fn plan(&self, n: u64, sm_count: u32) -> Result<Plan, RuntimeError> {
        let kernel = self.kernel(Target::Sm90a)?;
        let chunks = n.div_ceil(self.chunk() as u64).max(1);
        let grid = match self.ctas_per_sm {
            None => chunks,
            Some(c) => chunks.min(sm_count as u64 * c as u64),
        };
        Ok(Plan {
            kernel,
            grid: grid as u32,
            block: THREADS,
            dynamic_smem: 0,
            args: vec![PlanArg::Input, PlanArg::Output, PlanArg::A, PlanArg::B, PlanArg::U32(n as u32)],
        })
    }
}

/// The configurations `bench_stream --sweep` measures: Triton's shape (`v2`, one CTA per
/// chunk) and its neighbours, and persistent grids at 8 and 16 CTAs per SM.
pub fn bench_configs() -> Vec<LdgConfig> {
    let mut v: Vec<LdgConfig> = VECS.iter().map(|&vecs| LdgConfig { vecs, ctas_per_sm: None }).collect();
    for (vecs, c) in [(2, 16), (4, 8), (4, 16), (8, 8)] {
        v.push(LdgConfig { vecs, ctas_per_sm: Some(c) });
    }
    v
}

/// The gallery's configurations: every vector count with one CTA per chunk, and a persistent
/// grid (on the simulator's few SMs each CTA strides over several chunks).
fn gallery_configs() -> Vec<LdgConfig> {
    let mut v: Vec<LdgConfig> = [1, 2, 4].iter().map(|&vecs| LdgConfig { vecs, ctas_per_sm: None }).collect();
    v.push(LdgConfig { vecs: 2, ctas_per_sm: Some(1) });
    v
}

/// `Small` is one CTA striding over 3 chunks with a 3-element tail; `Quick` is 52015 floats
/// (a tail of 3 elements past the last full vector); `Full` is 16384 x 16384.
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    let (rows, cols, grid) = match size {
        Size::Small => (3, 1001, Some(1)),
        Size::Quick => (101, 515, None),
        Size::Full => (16384, 16384, None),
    };
    let variants: Vec<Variant> = gallery_configs().into_iter().map(Variant::Ldg).collect();
    super::stream_axpb::setup_with(dev, rows, cols, &variants, grid, seed)
}

pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    super::stream_axpb::check(p, outputs)
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "stream_ldg",
        about: "DSL y = a*x + b with ld.global.nc.v4 / st.global.v4: no shared memory, one CTA per chunk (Triton's shape) or persistent",
        kernels: |t| gallery_configs().iter().map(|c| c.kernel(t)).collect(),
        setup,
        check,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_limits() {
        assert_eq!(LdgConfig { vecs: 2, ctas_per_sm: None }.name(), "stream_ldg_v2");
        assert_eq!(LdgConfig { vecs: 4, ctas_per_sm: Some(8) }.name(), "stream_ldg_v4_p8");
        assert!(LdgConfig { vecs: 3, ctas_per_sm: None }.problem(100).unwrap().contains("vectors per thread"));
        assert!(LdgConfig { vecs: 2, ctas_per_sm: None }.problem(1 << 31).unwrap().contains("32-bit"));
        assert!(LdgConfig { vecs: 2, ctas_per_sm: None }.problem(1 << 28).is_none());
    }

    #[test]
    fn grids() {
        let c = LdgConfig { vecs: 2, ctas_per_sm: None };
        let p = c.plan(1 << 28, 132).unwrap();
        assert_eq!((p.grid, p.block, p.dynamic_smem), (262_144, 128, 0));
        assert_eq!(p.kernel.name(), "stream_ldg_v2");
        let p = LdgConfig { vecs: 4, ctas_per_sm: Some(8) }.plan(1 << 28, 132).unwrap();
        assert_eq!(p.grid, 1056);
        // Fewer chunks than the persistent grid: one CTA per chunk.
        assert_eq!(LdgConfig { vecs: 4, ctas_per_sm: Some(8) }.plan(5000, 132).unwrap().grid, 3);
    }

    #[test]
    fn ptx_uses_vector_memory_ops() {
        let ptx = phaser::codegen::emit_kernel(&stream_ldg::build(Target::Sm90a, 2).unwrap()).unwrap();
        use phaser::codegen::ptx_text::{count, has};
        assert_eq!(count(&ptx, "ld.global.nc.v4.f32 {%f*, %f*, %f*, %f*}, [%rd*]"), 2, "{ptx}");
        assert_eq!(count(&ptx, "st.global.v4.f32 [%rd*], {%f*, %f*, %f*, %f*}"), 2, "{ptx}");
        assert!(has(&ptx, "fma.rn.f32 %f*, %f*, %f*, %f*"), "{ptx}");
        assert!(!ptx.contains("mbarrier"), "{ptx}");
    }
}
