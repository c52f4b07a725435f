//! Simulator speed: thread-instructions per second on one core.
//! `cargo run --release -p phaser-runtime --example sim_speed`

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

fn main() {
    let (blocks, threads, iters) = (64u32, 256u32, 2000u32);
    for (name, cfg) in
        [("fast (no trace, no race check)", SimConfig::fast()), ("default (checks + trace)", SimConfig::default())]
    {
        let dev = Device::sim(cfg);
        let k = alu_kernel();
        let out = dev.alloc::<u32>((blocks * threads) as usize).unwrap();
        let r =
            dev.launch(&k, LaunchConfig::linear(blocks, threads), &[Arg::buffer(&out), Arg::scalar(iters)]).unwrap();
        let s = r.sim.unwrap().stats;
        println!(
            "alu_loop     [{name}]: {:>11} thread-instructions in {:>7.3} s = {:>6.1} M thread-inst/s",
            s.thread_instructions,
            s.wall.as_secs_f64(),
            s.rate() / 1e6
        );
        let k = barrier_kernel();
        let r = dev.launch(&k, LaunchConfig::linear(8, 128), &[Arg::scalar(2000u32)]).unwrap();
        let s = r.sim.unwrap().stats;
        println!(
            "barrier_loop [{name}]: {:>11} thread-instructions in {:>7.3} s = {:>6.1} M thread-inst/s",
            s.thread_instructions,
            s.wall.as_secs_f64(),
            s.rate() / 1e6
        );
    }
}
