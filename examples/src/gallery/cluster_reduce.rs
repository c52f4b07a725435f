//! Row sums split over the two CTAs of a cluster, their partial sums exchanged through
//! distributed shared memory, written only in the DSL.
//!
//! `y[r] = sum(x[r][0..512])` over a `rows x 512` f32 tensor. A cluster of 2 CTAs takes 4
//! rows at a time (after a first cluster barrier: every CTA is running before any DSMEM
//! store reaches it); CTA rank `k` sums columns `256 k .. 256 k + 256` of them (warp `w` one
//! row: lane `l` loads the 16-byte vectors `l + 32 c`, c = 0..2, through the read-only cache,
//! then 5 butterfly shuffles). Lane 0 of each warp stores its partial sum into CTA rank 0's
//! `partials` array (`T.ptx.mapa_shared` + `st.shared::cluster`); after a cluster barrier,
//! rank 0 adds the two halves (rank 0's first) and writes `y`; a second barrier lets the
//! slots be reused. The simulator and the GPU agree bit for bit ([`reference`] follows the
//! order of the additions).

use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::{Device, LaunchConfig, RuntimeError};

/// Columns of the tensor: two halves of 256, one per CTA of the cluster.
pub const COLS: u32 = 512;
/// Rows a cluster sums at a time (one per warp of each CTA).
pub const ROWS_PER_STEP: u32 = 4;

#[phaser::kernel(target = "sm_90a")]
pub fn dsl_cluster_reduce(x: &[f32], y: &mut [f32], rows: u32) {
    T.require_block(128, 1, 1);
    T.cluster_dims(2, 1, 1);
    let partials = T.alloc_shared::<f32>([8]);
    let rank = T.cluster_cta_rank();
    let warp = T.warp_idx();
    let lane = T.lane_idx();
    // Every CTA stores into rank 0's slots: `partials[rank * 4 + warp]` there.
    let leader = T.ptx.mapa_shared(partials, 0);
    // Rank 1 stores into rank 0's shared memory, which needs rank 0 running: a CTA of a
    // cluster may not have started yet (CUDA guide, distributed shared memory: sync first).
    T.cuda.cluster_sync();
    let clusters = T.grid_dim() / 2;
    let steps = (rows + 3) / 4;
    let mut g = T.block_idx() / 2;
    while g < steps {
        let row = g * 4 + warp;
        let mut s = 0.0;
        if row < rows {
            for c in 0..2 {
                let v = T.ld.nc_v4(x, row * 512 + rank * 256 + (lane + c * 32) * 4);
                s = s + v[0] + v[1] + v[2] + v[3];
            }
        }
        for k in 0..5 {
            s += T.ptx.shfl.sync.bfly(s, 16 >> k);
        }
        if lane == 0 {
            leader[rank * 4 + warp] = s;
        }
        // Rank 1's partial sums land in rank 0 before rank 0 reads them (release/acquire).
        T.cuda.cluster_sync();
        if rank == 0 && lane == 0 && row < rows {
            y[row] = partials[warp] + partials[4 + warp];
        }
        // Rank 0 has read the slots before anyone overwrites them (and neither CTA exits
        // while the other may still store into it).
        T.cuda.cluster_sync();
        g += clusters;
    }
}

/// The CPU reference, in the kernel's order: per lane two vectors of 4 (`s + v0 + v1 + v2 +
/// v3`, left to right), the butterfly over the 32 lanes, then rank 0's half plus rank 1's.
pub fn reference(x: &[f32], rows: u32) -> Vec<f32> {
    let half = |row: &[f32], rank: usize| {
        let mut s: Vec<f32> = (0..32)
            .map(|l| {
                (0..2).fold(0.0f32, |s, c| {
                    let v = &row[rank * 256 + (l + c * 32) * 4..][..4];
                    s + v[0] + v[1] + v[2] + v[3]
                })
            })
            .collect();
        for step in [16, 8, 4, 2, 1] {
            s = (0..32).map(|l| s[l] + s[l ^ step]).collect();
        }
        s[0]
    };
    (0..rows as usize)
        .map(|r| {
            let row = &x[r * COLS as usize..(r + 1) * COLS as usize];
            half(row, 0) + half(row, 1)
        })
        .collect()
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "dsl_cluster_reduce",
        about: "DSL 2-CTA cluster row sums: vector loads, shuffles, partial sums exchanged through DSMEM",
        kernels: |t| Ok(vec![dsl_cluster_reduce::build(t)?]),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub rows: u32,
    pub clusters: u32,
    pub x: Vec<f32>,
    pub y: BufferId<f32>,
}

/// `rows x 512` random f32s; the last step is ragged (rows past the end sum nothing).
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    let (rows, clusters) = match size {
        Size::Small => (10u32, 1u32),
        Size::Quick => (30, 3),
        Size::Full => (1 << 15, 66),
    };
    let x = random_f32((rows * COLS) as usize, seed);
    let mut p = Problem::new(seed);
    let xb = p.input(dev, &x)?;
    let y = p.output(dev, rows as usize, f32::NAN)?;
    let k = dsl_cluster_reduce::kernel()?;
    p.launch(k, LaunchConfig::linear(2 * clusters, 128), [xb.into(), y.into(), rows.into()], [y.into()]);
    p.set_host(Host { rows, clusters, x, y });
    Ok(p)
}

pub fn check(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.x, h.rows);
    let got = out.get(0, h.y);
    let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i].to_bits() != want[i].to_bits()).collect();
    let detail = match bad.first() {
        None => {
            format!(
                "{} rows x {COLS} f32, {} clusters of 2, seed {}: every row sum bit-exact",
                h.rows, h.clusters, p.seed
            )
        }
        Some(&i) => {
            format!("{} of {} row sums differ; row {i}: got {}, want {}", bad.len(), want.len(), got[i], want[i])
        }
    };
    Outcome::new(bad.is_empty(), detail)
}
