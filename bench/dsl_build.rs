//! IR build + PTX print time of each DSL gallery kernel (uncached `build`), beside the same
//! kernels written with the builder API. Macro expansion happens at compile time and is
//! measured separately (see `bench/dsl.md`). `cargo bench --bench dsl_build`.

use criterion::{criterion_group, criterion_main, Criterion};
use phaser::codegen::{emit_kernel, Kernel, Result};
use phaser::Target;
use phaser_examples::gallery::{dsl_seeds::*, seeds};
use std::hint::black_box;

type Build = Box<dyn Fn() -> Result<Kernel>>;

fn bench(c: &mut Criterion) {
    let t = Target::Sm90a;
    let cases: Vec<(&str, Build)> = vec![
        ("dsl_seed_thread_arrive_wait", Box::new(move || dsl_seed_thread_arrive_wait::build(t))),
        ("builder_seed_thread_arrive_wait", Box::new(move || seeds::thread_arrive_wait(t))),
        ("dsl_seed_producer_consumer", Box::new(move || dsl_seed_producer_consumer::build(t))),
        ("builder_seed_producer_consumer", Box::new(move || seeds::producer_consumer(t))),
        ("dsl_seed_phase_flip", Box::new(move || dsl_seed_phase_flip::build(t, ROUNDS))),
        ("builder_seed_phase_flip", Box::new(move || seeds::phase_flip(t))),
        ("dsl_phase_tma", Box::new(move || dsl_phase_tma::build(t, ROUNDS))),
    ];
    let mut g = c.benchmark_group("build+ptx");
    for (name, build) in &cases {
        g.bench_function(*name, |b| b.iter(|| emit_kernel(&build().unwrap()).unwrap().len()));
    }
    g.finish();
    let mut g = c.benchmark_group("build");
    for (name, build) in &cases {
        g.bench_function(*name, |b| b.iter(|| black_box(build().unwrap())));
    }
    g.finish();
    c.bench_function("cached kernel_for (hit)", |b| b.iter(|| black_box(dsl_phase_tma::kernel_for(ROUNDS).unwrap())));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
