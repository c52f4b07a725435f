//! Diagnostic for a compute-sanitizer synccheck report ("Barrier error detected. Missing wait.")
//! on the gallery's `cp_async_mbarrier`: minimal one-stage kernels that differ in one thing
//! each, run one per process (`diag_cp_async_synccheck VARIANT`, `--help` lists them) under
//! `compute-sanitizer --tool synccheck` to see which construct the tool objects to.
//!
//! Every variant: 64 producer threads each `cp.async` 16 bytes of `inp` into shared memory and
//! signal a `full` barrier; 32 consumer threads wait on `full` and copy the tile to `out`.

use clap::Parser;
use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Space, Type, Value};
use phaser::{Arg, Device, LaunchConfig, Target};

#[derive(Clone, Copy, Debug)]
struct Variant {
    /// `cp.async.mbarrier.arrive.noinc` (counted) instead of the net-zero form + `mbarrier.arrive`.
    noinc: bool,
    /// Producers end with `cp.async.commit_group` + `cp.async.wait_group 0`.
    final_wait_group: bool,
    /// Producers also wait on `full` (the phase their copies complete) before exiting.
    producers_wait: bool,
    /// Consumers wait with `mbarrier.try_wait` (sm_90) instead of a `test_wait` loop.
    try_wait: bool,
}

const VARIANTS: [(&str, Variant); 5] = [
    ("gallery_like", Variant { noinc: false, final_wait_group: true, producers_wait: false, try_wait: false }),
    ("noinc", Variant { noinc: true, final_wait_group: true, producers_wait: false, try_wait: false }),
    ("no_final_wait_group", Variant { noinc: false, final_wait_group: false, producers_wait: false, try_wait: false }),
    ("producers_wait", Variant { noinc: false, final_wait_group: true, producers_wait: true, try_wait: false }),
    ("try_wait", Variant { noinc: false, final_wait_group: true, producers_wait: false, try_wait: true }),
];

fn kernel(v: Variant) -> phaser::Kernel {
    let mut k = KernelBuilder::new("diag_cp_async", Target::Sm90a);
    let inp = k.param_global("inp", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(96, 1, 1);
    let tile = k.alloc_shared("tile", Type::U32, 256);
    let bars = k.alloc_barriers("full", 1);
    let full = k.barrier_at(bars, Value::u32(0));
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(full, Value::u32(64)));
    k.cta_sync();
    let wait = |k: &mut KernelBuilder| {
        if v.try_wait {
            k.mbarrier_wait(full, Value::u32(0));
        } else {
            k.loop_(|k| {
                let done = k.mbarrier_test_wait(full, Value::u32(0));
                k.if_then(done, |k| k.break_());
            });
        }
    };
    let producer = k.lt(tid, Value::u32(64));
    k.if_else(
        producer,
        |k| {
            let first = k.mul(tid, Value::u32(4));
            let dst = k.shared_elem_addr(tile, first);
            let src_i = k.mul(tid, Value::u32(4));
            let src = k.global_elem_addr(inp, src_i);
            k.cp_async(dst, src, 16);
            k.cp_async_mbarrier_arrive(full, v.noinc);
            if !v.noinc {
                k.mbarrier_arrive(full);
            }
            if v.final_wait_group {
                k.cp_async_commit_group();
                k.cp_async_wait_group(0);
            }
            if v.producers_wait {
                wait(k);
            }
        },
        |k| {
            wait(k);
            let c = k.sub(tid, Value::u32(64));
            let base = k.mul(c, Value::u32(8));
            for j in 0..8u32 {
                let i = k.add(base, Value::u32(j));
                let a = k.shared_elem_addr(tile, i);
                let x = k.ld_raw(Space::Shared, Type::U32, a, 0);
                k.st_global(out, i, x);
            }
        },
    );
    k.finish().expect("diagnostic kernel builds")
}

#[derive(Parser)]
#[command(about = "Minimal cp.async + mbarrier kernels, one construct apart, for compute-sanitizer's synccheck")]
struct Opts {
    /// The variant to run (default: all, one after another).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(VARIANTS.map(|(name, _)| name)))]
    variant: Option<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let which = Opts::parse().variant;
    let dev = Device::best().0;
    for (name, v) in VARIANTS {
        if which.as_deref().is_some_and(|w| w != name) {
            continue;
        }
        let k = kernel(v);
        let data = phaser_examples::gallery::random_u32(256, phaser_examples::gallery::fresh_seed());
        let inp = dev.upload(&data)?;
        let out = dev.upload(&[phaser_examples::gallery::POISON_U32; 256])?;
        dev.launch(&k, LaunchConfig::linear(1, 96), &[Arg::buffer(&inp), Arg::buffer(&out)])?;
        let got = dev.download(&out)?;
        println!("{name}: {}", if got == data { "output ok" } else { "OUTPUT WRONG" });
    }
    Ok(())
}
