//! Simulator speed: simulated thread-instructions per second of wall time.
//!
//! `cargo run --release -p phaser-runtime --example sim_speed [-- REPS [FILTER]]` runs every
//! kernel (whose name or setting contains FILTER) `REPS` times (default 5) under two settings and prints the median, minimum and maximum rate
//! (the development machine is shared and noisy: compare medians measured in the same session).

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::{Dim, Type, Value};
use phaser_codegen::Target;
use phaser_runtime::sim::SimConfig;
use phaser_runtime::{Arg, Device, LaunchConfig};

/// An integer/float loop (hash + FMA chain) with one global store per thread.
fn alu_kernel() -> phaser_codegen::Kernel {
    let mut k = KernelBuilder::new("alu_loop", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let iters = k.param("iters", Type::U32);
    let tid = k.thread_idx(Dim::X);
    let bid = k.block_idx(Dim::X);
    let nt = k.block_dim(Dim::X);
    let g = k.mad(bid, nt, tid);
    let h = k.var(g);
    let f = k.var(Value::f32(1.0));
    k.for_range(Value::u32(0), iters, |k, i| {
        let a = k.mul(Value::Reg(h), Value::u32(0x9E37_79B1));
        let b = k.xor(a, i);
        let c = k.shr(b, Value::u32(7));
        let d = k.add(b, c);
        k.assign(h, d);
        let x = k.cvt(c, Type::F32);
        let y = k.mad(Value::Reg(f), Value::f32(0.999), x);
        k.assign(f, y);
    });
    let fi = k.cvt(Value::Reg(f), Type::U32);
    let r = k.xor(Value::Reg(h), fi);
    k.st_global(out, g, r);
    k.finish().expect("kernel")
}

/// A barrier-heavy loop: 4 warps arrive and wait on one mbarrier every iteration.
fn barrier_kernel() -> phaser_codegen::Kernel {
    let mut k = KernelBuilder::new("barrier_loop", Target::Sm90a);
    let iters = k.param("iters", Type::U32);
    let bars = k.alloc_barriers("bar", 1);
    let tid = k.thread_idx(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    let is0 = k.eq(tid, Value::u32(0));
    let nt = k.block_dim(Dim::X);
    k.if_then(is0, |k| k.mbarrier_init(bar, nt));
    k.cta_sync();
    let phase = k.var(Value::u32(0));
    k.for_range(Value::u32(0), iters, |k, _| {
        k.mbarrier_arrive(bar);
        k.mbarrier_wait(bar, Value::Reg(phase));
        let p = k.xor(Value::Reg(phase), Value::u32(1));
        k.assign(phase, p);
    });
    k.finish().expect("kernel")
}

struct Rate {
    thread_instructions: u64,
    secs: Vec<f64>,
}

impl Rate {
    fn line(&self, name: &str, setting: &str) -> String {
        let mut s = self.secs.clone();
        s.sort_by(f64::total_cmp);
        let m = |t: f64| self.thread_instructions as f64 / t / 1e6;
        format!(
            "{name:<13} [{setting:<10}] {:>11} thread-inst, median {:>7.3} s = {:>6.1} M/s (min {:>6.1}, max {:>6.1}; {} runs)",
            self.thread_instructions,
            s[s.len() / 2],
            m(s[s.len() / 2]),
            m(s[s.len() - 1]),
            m(s[0]),
            s.len()
        )
    }
}

fn measure(reps: usize, mut run: impl FnMut() -> phaser_runtime::sim::Stats) -> Rate {
    let mut secs = Vec::new();
    let mut thread_instructions = 0;
    for _ in 0..reps {
        let s = run();
        thread_instructions = s.thread_instructions;
        secs.push(s.wall.as_secs_f64());
    }
    Rate { thread_instructions, secs }
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let filter = std::env::args().nth(2).unwrap_or_default();
    let wanted = |kernel: &str, setting: &str| format!("{kernel} {setting}").contains(&filter);
    let (blocks, threads, iters) = (64u32, 256u32, 2000u32);
    // One core, then every core (clusters of different CTAs run in parallel between epochs).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = |c: SimConfig| SimConfig { threads: 1, ..c };
    let all = |c: SimConfig| SimConfig { threads: cores, ..c };
    let settings = [
        ("fast", one(SimConfig::fast())),
        ("checked", one(SimConfig::default())),
        ("fast-mt", all(SimConfig::fast())),
        ("checked-mt", all(SimConfig::default())),
    ];
    let alu = alu_kernel();
    let barrier = barrier_kernel();
    for (name, cfg) in &settings {
        let dev = Device::sim(cfg.clone());
        let out = dev.alloc::<u32>((blocks * threads) as usize).unwrap();
        if wanted("alu_loop", name) {
            let r = measure(reps, || {
                let args = [Arg::buffer(&out), Arg::scalar(iters)];
                dev.launch(&alu, LaunchConfig::linear(blocks, threads), &args).unwrap().sim.unwrap().stats
            });
            println!("{}", r.line("alu_loop", name));
        }
        if wanted("barrier_loop", name) {
            let r = measure(reps, || {
                let args = [Arg::scalar(2000u32)];
                dev.launch(&barrier, LaunchConfig::linear(8, 128), &args).unwrap().sim.unwrap().stats
            });
            println!("{}", r.line("barrier_loop", name));
        }
    }
}
