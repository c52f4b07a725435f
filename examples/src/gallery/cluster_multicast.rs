//! Clusters: multicast TMA and remote mbarrier arrivals.
//!
//! A cluster of `N` CTAs (along x) shares every tile: the tile (32 rows x 64 f32 = 8 KiB)
//! is cut into `N` row slices, CTA `r` of the cluster loads slice `r` once with
//! `cp.async.bulk.tensor ... .multicast::cluster` and the copy engine writes it into the
//! same shared-memory offset of every CTA in the cluster, completing its bytes on each
//! CTA's `full` barrier. So each CTA's `full` barrier receives `N` slices and its producer
//! registers the whole tile (`N x slice` bytes) with one `arrive.expect_tx`.
//!
//! A stage of CTA `r` can be refilled only when *every* CTA is done with that stage (CTA
//! `r`'s slice lands in all of them), so each consumer warp releases the stage in every CTA
//! of the cluster: `mapa` gives the peer's barrier address and
//! `mbarrier.arrive.release.cluster.shared::cluster` arrives on it. `empty` therefore
//! expects `4 consumer warps x N CTAs` arrivals. The pipeline's barriers are initialized,
//! fenced (`fence.mbarrier_init.release.cluster`) and published with a cluster barrier
//! before any copy is issued, and the CTAs meet at a final cluster barrier so that none exits
//! while peers may still write its shared memory or arrive on its barriers.
//!
//! CTA `r` writes `out[r][row][col] = x[row][col] * (r + 1)`: every CTA must have received
//! every slice of every tile its cluster processed (clusters walk tiles persistently).

use phaser::codegen::builder::{Arrivals, KernelBuilder, Pipeline, PipelineConfig};
use phaser::codegen::ir::{Dim, Space, Type, Value};
use phaser::codegen::{Kernel, Result, Target};
use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, LaunchConfig, RuntimeError, Swizzle};

pub const TILE_COLS: u32 = 64;
pub const TILE_ROWS: u32 = 32;
pub const TILE_ELEMS: u32 = TILE_COLS * TILE_ROWS;
pub const TILE_BYTES: u32 = TILE_ELEMS * 4;
pub const STAGES: u32 = 4;
pub const CONSUMER_WARPS: u32 = 4;
pub const ROWS_PER_WARP: u32 = TILE_ROWS / CONSUMER_WARPS;
/// Warp 0 produces, warps 1..=4 consume.
pub const THREADS: u32 = 32 * (1 + CONSUMER_WARPS);

pub fn kernel_name(cluster: u32) -> String {
    format!("cluster_multicast_x{cluster}")
}

/// Rows of the slice each CTA of an `n`-CTA cluster loads and multicasts.
pub fn slice_rows(cluster: u32) -> u32 {
    TILE_ROWS / cluster
}

/// `cluster_multicast_x{N}(in_map, out, rows, cols, tiles_x, ntiles)`; the input map's box
/// is one slice (`64 x 32/N`).
pub fn kernel(target: Target, cluster: u32) -> Result<Kernel> {
    let mut k = KernelBuilder::new(kernel_name(cluster), target);
    if !matches!(cluster, 1 | 2 | 4 | 8) {
        k.error(format!("cluster size {cluster}: use 1, 2, 4 or 8 (a divisor of the 32-row tile, portable size)"));
    }
    let n = cluster.max(1);
    let in_map = k.param_tensor_map("in_map", 2);
    let out = k.param_global("out", Type::F32, true);
    let rows = k.param("rows", Type::U32);
    let cols = k.param("cols", Type::U32);
    let tiles_x = k.param("tiles_x", Type::U32);
    let ntiles = k.param("ntiles", Type::U32);
    k.require_block(THREADS, 1, 1);
    k.cluster(n, 1, 1);

    let tiles = k.alloc_shared_aligned("tiles", Type::F32, STAGES * TILE_ELEMS, 1024);
    let cfg = PipelineConfig {
        stages: STAGES,
        producers: Arrivals::Threads(1),
        consumers: Arrivals::Warps(CONSUMER_WARPS),
        consumer_ctas: n,
    };
    let pipe = Pipeline::new(&mut k, "mc", cfg);
    pipe.init(&mut k); // init, fence.mbarrier_init, barrier.cluster arrive + wait

    let base = k.shared_base_addr(tiles);
    let rank = k.cluster_cta_rank();
    let cta = k.block_idx(Dim::X);
    let nctas = k.grid_dim(Dim::X);
    let cluster_id = k.div(cta, Value::u32(n));
    let nclusters = k.div(nctas, Value::u32(n));
    let warp = k.warp_idx();
    let lane = k.lane_idx();
    let coords = move |k: &mut KernelBuilder, t: Value| {
        let ty = k.div(t, tiles_x);
        let tx = k.rem(t, tiles_x);
        let col = k.mul(tx, Value::u32(TILE_COLS));
        let row = k.mul(ty, Value::u32(TILE_ROWS));
        (col, row)
    };
    let is_producer = k.eq(warp, Value::u32(0));
    k.if_else(
        is_producer,
        |k| {
            k.elect_one(|k| {
                let st = pipe.producer_start_state(k);
                let slice_off = k.mul(rank, Value::u32(slice_rows(n) * TILE_COLS * 4));
                let slice_row = k.mul(rank, Value::u32(slice_rows(n)));
                let t = k.var(cluster_id);
                k.while_(
                    |k| k.lt(Value::Reg(t), ntiles),
                    |k| {
                        // Every CTA of the cluster released this stage (our empty barrier
                        // collects all their consumer warps).
                        pipe.producer_acquire(k, &st);
                        // This CTA receives all N slices: register the whole tile.
                        let full = pipe.producer_commit(k, &st, Value::u32(TILE_BYTES));
                        let stage = st.stage_addr(k, base, TILE_BYTES);
                        let dst = k.add(stage, slice_off);
                        let (col, row) = coords(k, Value::Reg(t));
                        let r = k.add(row, slice_row);
                        if n > 1 {
                            k.tma_load_multicast(dst, in_map, &[col, r], full, Value::u32((1 << n) - 1));
                        } else {
                            k.tma_load(dst, in_map, &[col, r], full);
                        }
                        st.advance(k);
                        let nt = k.add(Value::Reg(t), nclusters);
                        k.assign(t, nt);
                    },
                );
                pipe.producer_tail(k, &st);
            });
        },
        |k| {
            let cwarp = k.sub(warp, Value::u32(1));
            let scale = {
                let r1 = k.add(rank, Value::u32(1));
                k.cvt(r1, Type::F32)
            };
            // out[rank] starts rank * rows * cols elements in (u64 offsets).
            let plane = {
                let rc = k.cvt(rows, Type::U64);
                let cc = k.cvt(cols, Type::U64);
                let rr = k.cvt(rank, Type::U64);
                let p = k.mul(rc, cc);
                k.mul(p, rr)
            };
            let my_row0 = k.mul(cwarp, Value::u32(ROWS_PER_WARP));
            let lane_off = {
                let e = k.mul(my_row0, Value::u32(TILE_COLS));
                let e = k.add(e, lane);
                k.mul(e, Value::u32(4))
            };
            let st = pipe.consumer_start_state(k);
            let t = k.var(cluster_id);
            k.while_(
                |k| k.lt(Value::Reg(t), ntiles),
                |k| {
                    pipe.consumer_wait(k, &st);
                    let stage = st.stage_addr(k, base, TILE_BYTES);
                    let src = k.add(stage, lane_off);
                    let mut xs = Vec::new();
                    for r in 0..ROWS_PER_WARP {
                        for j in 0..TILE_COLS / 32 {
                            xs.push(k.ld_raw(Space::Shared, Type::F32, src, ((r * TILE_COLS + j * 32) * 4) as i32));
                        }
                    }
                    // Release the stage in every CTA of the cluster (remote arrivals).
                    pipe.consumer_release(k, &st);
                    let (col, row) = coords(k, Value::Reg(t));
                    let r0 = k.add(row, my_row0);
                    let c0 = k.add(col, lane);
                    for (i, x) in xs.iter().enumerate() {
                        let (r, j) = (i as u32 / (TILE_COLS / 32), i as u32 % (TILE_COLS / 32));
                        let y = k.mul(*x, scale);
                        let gr = k.add(r0, Value::u32(r));
                        let gc = k.add(c0, Value::u32(j * 32));
                        let gr64 = k.cvt(gr, Type::U64);
                        let cols64 = k.cvt(cols, Type::U64);
                        let gc64 = k.cvt(gc, Type::U64);
                        let idx = k.mad(gr64, cols64, gc64);
                        let idx = k.add(idx, plane);
                        k.st_global(out, idx, y);
                    }
                    st.advance(k);
                    let nt = k.add(Value::Reg(t), nclusters);
                    k.assign(t, nt);
                },
            );
        },
    );
    // No CTA leaves while a peer may still multicast into it or arrive on its barriers.
    k.cluster_sync();
    k.finish()
}

/// Tiles along columns and in total (sizes must be tile multiples).
pub fn tiling(rows: u32, cols: u32) -> (u32, u32) {
    (cols / TILE_COLS, (cols / TILE_COLS) * (rows / TILE_ROWS))
}

/// The CPU reference: `out[r][i] = x[i] * (r + 1)`.
pub fn reference(x: &[f32], cluster: u32) -> Vec<f32> {
    let mut v = Vec::with_capacity(x.len() * cluster as usize);
    for r in 0..cluster {
        v.extend(x.iter().map(|&e| e * (r + 1) as f32));
    }
    v
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "cluster_multicast",
        about: "clusters of 2 and 4 CTAs share tiles through multicast TMA; consumers release stages with remote (mapa) arrivals",
        kernels: |t| CLUSTERS.iter().map(|&n| kernel(t, n)).collect(),
        setup,
        check,
    }]
}

/// The cluster sizes the gallery launches, in order.
pub const CLUSTERS: [u32; 2] = [2, 4];

/// What the check needs.
pub struct Host {
    pub rows: u32,
    pub cols: u32,
    pub x: Vec<f32>,
    /// Per launch: the clusters of the grid and the output (one plane per CTA rank).
    pub launches: Vec<(u32, BufferId<f32>)>,
}

pub fn setup(dev: &Device, size: Size, seed: u64) -> std::result::Result<Problem, RuntimeError> {
    let (rows, cols) = match size {
        // One cluster walks 6 tiles: the 4-stage ring wraps.
        Size::Small => (3 * TILE_ROWS, 2 * TILE_COLS),
        Size::Quick => (6 * TILE_ROWS, 2 * TILE_COLS),
        Size::Full => (2048, 1024),
    };
    let x = random_f32((rows * cols) as usize, seed);
    let mut p = Problem::new(seed);
    let inp = p.input(dev, &x)?;
    let (tiles_x, ntiles) = tiling(rows, cols);
    let mut launches = Vec::new();
    for n in CLUSTERS {
        let map = p.tensor_map(dev, inp, &[cols as u64, rows as u64], &[TILE_COLS, slice_rows(n)], Swizzle::None)?;
        let out = p.output(dev, x.len() * n as usize, f32::NAN)?;
        // Persistent clusters: at most one CTA per SM, at most one cluster per tile.
        let nclusters = match size {
            Size::Small => 1,
            _ => (dev.sm_count()? / n).clamp(1, ntiles),
        };
        p.launch(
            kernel(Target::Sm90a, n)?,
            LaunchConfig::linear(nclusters * n, THREADS),
            [map.into(), out.into(), rows.into(), cols.into(), tiles_x.into(), ntiles.into()],
            [out.into()],
        );
        launches.push((nclusters, out));
    }
    p.set_host(Host { rows, cols, x, launches });
    Ok(p)
}

/// CTA rank `r` of every cluster wrote `x * (r + 1)` over the whole tensor.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let (rows, cols) = (h.rows, h.cols);
    let mut passed = true;
    let mut details = Vec::new();
    for (i, (&n, &(nclusters, out))) in CLUSTERS.iter().zip(&h.launches).enumerate() {
        let got = outputs.get(i, out);
        let want = reference(&h.x, n);
        let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i].to_bits() != want[i].to_bits()).collect();
        if bad.is_empty() {
            details.push(format!("cluster {n} ({nclusters} clusters) ok"));
        } else {
            passed = false;
            let i = bad[0];
            let plane = (rows * cols) as usize;
            details.push(format!(
                "cluster {n}: {} wrong, first CTA rank {} row {} col {}: got {} want {}",
                bad.len(),
                i / plane,
                (i % plane) / cols as usize,
                i % cols as usize,
                got[i],
                want[i]
            ));
        }
    }
    let (_, ntiles) = tiling(rows, cols);
    Outcome::new(passed, format!("{rows}x{cols} f32, {ntiles} tiles, seed {}: {}", p.seed, details.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_protocol() {
        let ptx = phaser::codegen::emit_kernel(&kernel(Target::Sm90a, 2).unwrap()).unwrap();
        use phaser::codegen::ptx_text::{find_all, has, has_directive};
        for directive in [".explicitcluster", ".reqnctapercluster 2, 1, 1"] {
            assert!(has_directive(&ptx, directive), "missing `{directive}` in\n{ptx}");
        }
        for inst in [
            "fence.mbarrier_init.release.cluster",
            "barrier.cluster.arrive.release.aligned",
            "barrier.cluster.wait.acquire.aligned",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster*",
            "mapa.shared::cluster.u32",
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r*]",
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
            "mbarrier.arrive.expect_tx.shared::cta.b64 %rd*, _, _",
        ] {
            assert!(has(&ptx, inst), "missing `{inst}` in\n{ptx}");
        }
        // empty: 4 consumer warps x 2 CTAs; full: 1 producer; the tile's 8 KiB registered once.
        let counts: Vec<&str> = find_all(&ptx, "mbarrier.init.shared::cta.b64").iter().map(|i| i.operands[1]).collect();
        assert!(counts.contains(&"8") && counts.contains(&"1"), "{counts:?}");
        let tile = format!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r*], {TILE_BYTES}");
        assert_eq!(find_all(&ptx, &tile).len(), 1, "{ptx}");
    }

    #[test]
    fn bad_cluster_size() {
        assert!(kernel(Target::Sm90a, 3).is_err());
    }
}
