//! The tensor-parallel GEMM with its all-gather fused (`gallery/gemm_allgather_dsl.rs`)
//! against its sequential baseline, on R GPUs (`bench/multigpu.md`):
//! (a) NCCL all-gather of A, then the DSL GEMM on the gathered A (the same kernel, every
//!     m-block its own: no waits, the whole GPU's grid), per rank, timed with CUDA events on
//!     the communicator's stream (each part's device time, medians over the repetitions, the
//!     slowest rank's);
//! (b) the fused step: every rank's GEMM and pushes in one launch group, timed on the host
//!     around the group (which waits for every launch), medians.
//! Prints both, the speedup t_seq / t_fused and the overlap t_fused / max(t_gemm, t_allgather)
//! (1.0: communication fully hidden). With fewer than 2 GPUs it says why and exits 0.
//!
//! `bench_tp_gemm [--ranks R] [--shape M N K] [--reps N]` (default: every GPU, 8192 4096 4096,
//! 20 repetitions after 3 warm-up ones).

use half::bf16;
use phaser::runtime::nccl::{check_multicast_env, run_ranks};
use phaser::{Arg, Device, LaunchConfig, Swizzle};
use phaser_examples::gallery::gemm_dsl::{BLOCK_K, EPI, THREADS};
use phaser_examples::gemm::tp::{TpGemm, TpKernels, TpTiles};
use std::time::{Duration, Instant};

const WARMUP: usize = 3;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_tp_gemm: {e}");
        std::process::exit(1);
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut ranks, mut shape, mut reps) = (None, (8192u32, 4096u32, 4096u32), 20usize);
    let mut i = 0;
    while i < args.len() {
        let num = |j: usize| -> Result<u32, Box<dyn std::error::Error>> {
            let s = args.get(j).ok_or_else(|| format!("`{}` needs a value", args[i]))?;
            Ok(s.parse().map_err(|e| format!("`{}` {s}: {e}", args[i]))?)
        };
        match args[i].as_str() {
            "--ranks" => {
                ranks = Some(num(i + 1)? as usize);
                i += 2;
            }
            "--shape" => {
                shape = (num(i + 1)?, num(i + 2)?, num(i + 3)?);
                i += 4;
            }
            "--reps" => {
                reps = (num(i + 1)? as usize).max(1);
                i += 2;
            }
            other => return Err(format!("unknown argument `{other}` (--ranks R, --shape M N K, --reps N)").into()),
        }
    }
    let count = match Device::count() {
        Ok(n) => n,
        Err(e) => {
            println!("bench_tp_gemm: no CUDA driver ({e}): needs at least 2 GPUs; nothing run");
            return Ok(());
        }
    };
    if count < 2 {
        println!(
            "bench_tp_gemm: {count} GPU(s): the tensor-parallel GEMM needs at least 2 (nvidia-h200-x2 or larger); \
             nothing run"
        );
        return Ok(());
    }
    let ranks = ranks.unwrap_or(count);
    if ranks < 2 || ranks > count {
        return Err(format!("--ranks {ranks}: between 2 and the {count} GPUs").into());
    }
    check_multicast_env()?;
    let (m, n, k) = shape;
    let devs: Vec<Device> = (0..ranks).map(Device::cuda).collect::<Result<_, _>>()?;
    let tiles = TpTiles::gallery();
    let kernels = TpKernels::new(tiles)?;

    // (b) Fused, checked first (epochs grow from step to step: the flags are never reset).
    let tp = TpGemm::new(devs.iter().collect(), tiles, shape, 1)?;
    let mut epoch = 0;
    for _ in 0..WARMUP {
        epoch += 1;
        tp.launch(&kernels, epoch)?;
    }
    if let Err(why) = tp.check()? {
        return Err(format!("the fused GEMM is wrong: {why}").into());
    }
    let mut fused = Vec::with_capacity(reps);
    for _ in 0..reps {
        epoch += 1;
        let t = Instant::now();
        tp.launch(&kernels, epoch)?;
        fused.push(t.elapsed());
    }
    let t_fused = median(fused);

    // (a) Sequential: NCCL's all-gather, then the GEMM alone on the gathered A.
    let rows = (m / ranks as u32) as usize;
    let (a, bs) = (tp.a.clone(), tp.bs.clone());
    let gemm = &kernels.gemm;
    let bm = tiles.block_m();
    let per_rank = run_ranks(&devs, |c| {
        let (r, s) = (c.rank(), c.stream());
        let d = s.device();
        let (ku, mu, nu) = (k as usize, m as usize, n as usize);
        let own = d.upload(&a[r * rows * ku..(r + 1) * rows * ku])?;
        let mut gathered = d.alloc::<bf16>(mu * ku)?;
        let b = d.upload(&bs[r])?;
        let c_out = d.alloc::<bf16>(mu * nu)?;
        let flags = d.alloc::<u32>((m / bm) as usize)?;
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        let ma = d.tensor_map(&gathered, &[k64, m64], &[BLOCK_K, bm], Swizzle::B128)?;
        let mb = d.tensor_map(&b, &[k64, n64], &[BLOCK_K, tiles.block_n], Swizzle::B128)?;
        let mc = d.tensor_map(&c_out, &[n64, m64], &[EPI, EPI], Swizzle::B128)?;
        let grid = ((m / bm) * n.div_ceil(tiles.block_n)).min(d.sm_count()?);
        let cfg = LaunchConfig::linear(grid, THREADS);
        let (mut gather_t, mut gemm_t) = (Vec::new(), Vec::new());
        for i in 0..WARMUP + reps {
            let e0 = s.record()?;
            let collective = c.all_gather(&own, &mut gathered)?;
            let e1 = s.record()?;
            collective.wait()?;
            let e2 = s.record()?;
            let args = [
                Arg::from(&ma),
                Arg::from(&mb),
                Arg::from(&mc),
                Arg::from(m),
                Arg::from(n),
                Arg::from(k),
                Arg::buffer(&flags),
                Arg::from(0u32),
                Arg::from(0u32),
                Arg::from(m),
            ];
            let launch = s.launch(gemm, cfg, args)?;
            let e3 = s.record()?;
            launch.wait()?;
            if i >= WARMUP {
                gather_t.push(e1.elapsed_since(&e0)?);
                gemm_t.push(e3.elapsed_since(&e2)?);
            }
        }
        Ok((median(gather_t), median(gemm_t)))
    })?;
    let t_gather = per_rank.iter().map(|p| p.0).max().unwrap_or_default();
    let t_gemm = per_rank.iter().map(|p| p.1).max().unwrap_or_default();
    let t_seq = t_gather + t_gemm;
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    println!("bench_tp_gemm: {ranks} ranks, C = A_full ({m} x {k}, gathered) * B ({n} x {k}) per rank, bf16");
    println!("  (a) NCCL all-gather      {:>10.1} us (device, slowest rank)", us(t_gather));
    println!(
        "  (a) DSL GEMM alone       {:>10.1} us (device, slowest rank; {:.0} TFLOP/s)",
        us(t_gemm),
        flops / t_gemm.as_secs_f64() / 1e12
    );
    println!("  (a) sequential           {:>10.1} us (all-gather + GEMM)", us(t_seq));
    println!("  (b) fused                {:>10.1} us (host, around the launch group)", us(t_fused));
    println!("  speedup t_seq / t_fused  {:>10.3}", t_seq.as_secs_f64() / t_fused.as_secs_f64());
    println!(
        "  overlap t_fused / max(t_gemm, t_allgather) {:.3} (1.0: communication fully hidden)",
        t_fused.as_secs_f64() / t_gemm.max(t_gather).as_secs_f64()
    );
    Ok(())
}
