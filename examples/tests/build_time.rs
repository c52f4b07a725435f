//! The release-build-time benchmark's generated kernel (`bench_build_time`, `bench/dsl.md`)
//! is the kernel it claims to be: a small one, generated into `build_time/sample.rs`, builds,
//! runs in the simulator without a checker finding, and writes what the plain Rust version of
//! the same statements returns. (The timing itself is a benchmark, not a test.)

use phaser::runtime::sim::SimConfig;
use phaser::{Device, LaunchConfig};
use phaser_examples::build_time::{sample, SAMPLE_STATEMENTS};

include!("build_time/sample.rs");

#[test]
fn the_committed_sample_is_the_generators_output() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/build_time/sample.rs");
    let committed = std::fs::read_to_string(path).unwrap();
    assert!(
        committed == sample(SAMPLE_STATEMENTS),
        "{path} is stale: `cargo run -p phaser-examples --bin bench_build_time -- --write-sample {path}`"
    );
}

#[test]
fn the_generated_kernel_computes_what_the_plain_rust_does() {
    for x in [0u32, 5, 0xdead_beef] {
        let dev = Device::sim(SimConfig::default());
        let mut out = dev.alloc::<u32>(1).unwrap();
        let report = sample_kernel::launch(&dev, LaunchConfig::linear(1, 1), &mut out, x).unwrap();
        let sim = report.sim.expect("a simulator report");
        assert!(sim.findings.is_empty(), "x = {x}:\n{}", sim.text());
        assert_eq!(dev.download(&out).unwrap()[0], sample_plain(x, 0), "x = {x}");
    }
}
