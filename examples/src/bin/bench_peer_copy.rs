//! Copy bandwidth from a peer GPU's memory (issue 24 §2): a kernel on GPU 1 that bulk-copies
//! (`cp.async.bulk` global→shared, then shared→global) or TMA-copies (a tensor map over the
//! peer mapping, `Device::tensor_map_peer`; TMA load then TMA store) GPU 0's buffer into its
//! own, against the driver's peer copy (`Device::copy_from_peer`: cudarc's `memcpy_dtod`
//! between contexts, `cuMemcpyPeerAsync`), in the same run, GB/s over sizes. With one GPU it
//! measures the same kernels on a device-local source against the device-to-device memcpy
//! (`Device::copy`) and says that the peer figures need two GPUs. Not a test: run it on the
//! GPU (`bench/peer_copy.md`).
//!
//! ```text
//! cargo run --release --bin bench_peer_copy                       # 16, 64, 256, 1024 MiB
//! cargo run --release --bin bench_peer_copy -- --sizes 64,256 --runs 20
//! cargo run --release --bin bench_peer_copy -- --sim              # the kernels on 2 simulated devices
//! ```
//!
//! Every method's output is checked bit for bit against the source before its times are
//! printed; a time is the median of `--runs` (after `--warmup`) of the device's events around
//! one launch or one copy. GB/s counts the bytes copied once.

use clap::Parser;
use phaser::{Arg, Buffer, Device, LaunchConfig, PeerView, Swizzle};
use std::process::ExitCode;
use std::time::Duration;

/// Bytes one CTA moves per step: a bulk copy's size, a TMA box (16 rows of 256 u32).
const CHUNK: u32 = 16384;
const CHUNK_WORDS: u32 = CHUNK / 4;
/// The TMA view: rows of 256 u32 (1 KiB), boxes of `BOX_ROWS` rows.
const ROW_WORDS: u32 = 256;
const BOX_ROWS: u32 = CHUNK / (ROW_WORDS * 4);

/// Copies `chunks` chunks of `src` into `dst` through shared memory, CTA `b` taking chunks
/// `b`, `b + grid`, ...: per chunk thread 0 bulk-copies it into shared memory (completing on
/// the barrier), the CTA waits, thread 0 bulk-stores it and waits until the store has read
/// shared memory before the next chunk overwrites it.
#[phaser::kernel(target = "sm_90a")]
fn peer_bulk_copy(src: &[u32], dst: &mut [u32], chunks: u32) {
    T.require_block(32, 1, 1);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let stage = T.alloc_shared::<u32>([CHUNK_WORDS]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    let mut phase = 0u32;
    let mut c = T.block_idx();
    while c < chunks {
        if tid == 0 {
            T.ptx.mbarrier.arrive.expect_tx(bar, CHUNK);
            T.ptx.cp_async.bulk.g2s(T.shared_addr(stage), T.global_elem_addr(src, c * CHUNK_WORDS), CHUNK, bar);
        }
        T.ptx.mbarrier.try_wait(bar, phase);
        phase = 1 - phase;
        if tid == 0 {
            T.ptx.cp_async.bulk.s2g(T.global_elem_addr(dst, c * CHUNK_WORDS), T.shared_addr(stage), CHUNK);
            T.ptx.cp_async.bulk.commit_group();
            T.ptx.cp_async.bulk.wait_group_read(0);
        }
        T.cuda.cta_sync();
        c += T.grid_dim();
    }
    if tid == 0 {
        T.ptx.cp_async.bulk.wait_group(0);
    }
}

/// [`peer_bulk_copy`] with TMA: `src` and `dst` are maps of rows of 256 u32, a chunk one box
/// of `BOX_ROWS` rows.
#[phaser::kernel(target = "sm_90a")]
fn peer_tma_copy(src: TensorMap<2>, dst: TensorMap<2>, chunks: u32) {
    T.require_block(32, 1, 1);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let stage = T.alloc_shared::<u32>([CHUNK_WORDS]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    let mut phase = 0u32;
    let mut c = T.block_idx();
    while c < chunks {
        if tid == 0 {
            T.ptx.mbarrier.arrive.expect_tx(bar, CHUNK);
            T.ptx.cp_async.bulk.tensor.g2s(T.shared_addr(stage), src, [0, c * BOX_ROWS], bar);
        }
        T.ptx.mbarrier.try_wait(bar, phase);
        phase = 1 - phase;
        if tid == 0 {
            T.ptx.cp_async.bulk.tensor.s2g(dst, [0, c * BOX_ROWS], T.shared_addr(stage));
            T.ptx.cp_async.bulk.commit_group();
            T.ptx.cp_async.bulk.wait_group_read(0);
        }
        T.cuda.cta_sync();
        c += T.grid_dim();
    }
    if tid == 0 {
        T.ptx.cp_async.bulk.wait_group(0);
    }
}

#[derive(Parser)]
#[command(about = "Bulk/TMA copies from a peer GPU's memory against cudaMemcpyPeer (device-local with one GPU)")]
struct Opts {
    /// Sizes to copy, in MiB (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [16u64, 64, 256, 1024])]
    sizes: Vec<u64>,
    /// Timed runs per method and size.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// Untimed runs before them.
    #[arg(long, default_value_t = 2)]
    warmup: u64,
    /// CTAs per SM of the copy kernels (16 KiB of shared memory each).
    #[arg(long, default_value_t = 8)]
    ctas_per_sm: u32,
    /// Run the kernels on two simulated devices at a small size and check the bytes (no times).
    #[arg(long)]
    sim: bool,
    /// Write the two kernels' PTX into this folder and exit (for ptxas, ncu).
    #[arg(long)]
    ptx: Option<std::path::PathBuf>,
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn gbps(bytes: u64, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

/// Where the source is: a buffer of the copying device, or a peer's through its mapping.
enum Source<'a> {
    Local(&'a Buffer<u32>),
    Peer(&'a PeerView<'a, u32>),
}

impl Source<'_> {
    fn arg(&self) -> Arg<'_> {
        match self {
            Source::Local(b) => Arg::buffer(*b),
            Source::Peer(v) => Arg::from(*v),
        }
    }
}

/// The three methods on `dev` copying `src` (`words` u32) into `dst`: each method's median
/// time (None on the simulator), after checking its output against `want`.
fn measure(
    dev: &Device,
    src: &Source,
    dst: &mut Buffer<u32>,
    words: u64,
    want: &[u32],
    o: &Opts,
    grid: u32,
) -> Res<Vec<(&'static str, Option<Duration>)>> {
    let chunks = (words * 4 / CHUNK as u64) as u32;
    let rows = words / ROW_WORDS as u64;
    let cfg = LaunchConfig::linear(grid.min(chunks), 32);
    let (kb, kt) = (peer_bulk_copy::kernel()?, peer_tma_copy::kernel()?);
    let dims = [ROW_WORDS as u64, rows];
    let boxes = [ROW_WORDS, BOX_ROWS];
    let src_map = match src {
        Source::Local(b) => dev.tensor_map(b, &dims, &boxes, Swizzle::None)?,
        Source::Peer(v) => dev.tensor_map_peer(v, &dims, &boxes, Swizzle::None)?,
    };
    let mut out = Vec::new();
    for method in ["bulk copy", "TMA copy", "driver memcpy"] {
        let mut times = Vec::new();
        for run in 0..o.warmup + o.runs {
            let t = match method {
                "bulk copy" => dev.launch(&kb, cfg, &[src.arg(), Arg::buffer_mut(dst), Arg::scalar(chunks)])?.elapsed,
                "TMA copy" => {
                    let dst_map = dev.tensor_map(dst, &dims, &boxes, Swizzle::None)?;
                    let args = [Arg::TensorMap(&src_map), Arg::TensorMap(&dst_map), Arg::scalar(chunks)];
                    dev.launch(&kt, cfg, &args)?.elapsed
                }
                _ => match src {
                    Source::Local(b) => dev.copy(b, dst)?,
                    Source::Peer(v) => dev.copy_from_peer(v, dst)?,
                },
            };
            if run >= o.warmup {
                times.extend(t);
            }
        }
        let got = dev.download(dst)?;
        if got != want {
            let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            return Err(format!("{method}: the copy differs from the source at word {first}").into());
        }
        dev.write(dst, &vec![0u32; words as usize])?;
        out.push((method, (!times.is_empty()).then(|| median(times))));
    }
    Ok(out)
}

fn print_row(what: &str, bytes: u64, results: &[(&str, Option<Duration>)]) {
    let kib = bytes >> 10;
    for (method, t) in results {
        match t {
            Some(t) => {
                println!("| {what} | {kib} | {method} | {:.1} | {:.1} |", t.as_secs_f64() * 1e6, gbps(bytes, *t))
            }
            None => println!("| {what} | {kib} | {method} | bit-exact (simulator: no time) | |"),
        }
    }
}

fn run(o: &Opts) -> Res<()> {
    if let Some(dir) = &o.ptx {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("peer_bulk_copy.ptx"), &*peer_bulk_copy::kernel()?.ptx()?)?;
        std::fs::write(dir.join("peer_tma_copy.ptx"), &*peer_tma_copy::kernel()?.ptx()?)?;
        return Ok(());
    }
    let (devs, sizes): (Vec<Device>, Vec<u64>) = if o.sim {
        // Four chunks: every CTA of a 2-CTA grid takes two.
        (Device::sim_system(2, Default::default()), vec![4 * CHUNK as u64])
    } else {
        (Device::all()?, o.sizes.iter().map(|m| m << 20).collect())
    };
    if devs.is_empty() {
        return Err("no CUDA GPU (run on the GPU machine, or `--sim`)".into());
    }
    let consumer = &devs[devs.len().min(2) - 1];
    let grid = if o.sim { 2 } else { consumer.sm_count()? * o.ctas_per_sm };
    println!("| source | KiB | method | us | GB/s |");
    println!("| --- | --- | --- | --- | --- |");
    for &bytes in &sizes {
        if bytes == 0 || bytes % CHUNK as u64 != 0 {
            return Err(format!("{bytes} bytes is not a multiple of the {CHUNK}-byte chunk").into());
        }
        let words = bytes / 4;
        let want: Vec<u32> = (0..words as u32).map(|i| i.wrapping_mul(2654435761) ^ 0x5eed).collect();
        let mut dst = consumer.alloc::<u32>(words as usize)?;
        // Device-local: the consumer's own buffer.
        let local = consumer.upload(&want)?;
        let r = measure(consumer, &Source::Local(&local), &mut dst, words, &want, o, grid)?;
        print_row(&format!("local ({})", consumer.id()), bytes, &r);
        drop(local);
        if devs.len() >= 2 {
            let owner = &devs[0];
            consumer.enable_peer_access(owner)?;
            let theirs = owner.upload(&want)?;
            let view = theirs.peer(consumer)?;
            let r = measure(consumer, &Source::Peer(&view), &mut dst, words, &want, o, grid)?;
            print_row(&format!("peer ({} -> {})", owner.id(), consumer.id()), bytes, &r);
        }
    }
    if devs.len() < 2 {
        println!("one GPU: the peer figures (a peer's memory by bulk copy, TMA and cudaMemcpyPeer) need two GPUs");
    }
    Ok(())
}

fn main() -> ExitCode {
    let o = Opts::parse();
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_peer_copy: {e}");
            ExitCode::FAILURE
        }
    }
}
