//! Every streaming variant `bench_stream --sweep` times on the GPU (`bench/stream.md`) also
//! runs in the simulator on a ragged tensor: bit-exact against the CPU, no checker finding.
//! The GPU run checks the same launches (`stream_axpb::setup_with`) at 16384 x 16384.

use phaser::runtime::sim::SimConfig;
use phaser::Device;
use phaser_examples::gallery::stream_plan::Variant;
use phaser_examples::gallery::{run_problem, stream_axpb, stream_ldg};

/// 64 x 516: a partial tile along the columns (516 = 2 x 256 + 4), a multiple of 256 elements
/// (the linear view's condition) and of 4 columns (direct stores' condition).
const SHAPE: (u64, u64) = (64, 516);

fn simulate(variants: &[Variant], grid: Option<u32>) {
    let dev = Device::sim(SimConfig::default().with_seed(7));
    let mut p = stream_axpb::setup_with(&dev, SHAPE.0, SHAPE.1, variants, grid, 7).unwrap();
    let out = run_problem(&dev, &mut p).unwrap();
    let o = stream_axpb::check(&p, &out);
    assert!(o.passed, "{}", o.detail);
    for (l, launch) in out.launches.iter().enumerate() {
        let rep = launch.sim.as_ref().expect("a simulator report");
        assert!(rep.findings.is_empty(), "{}:\n{}", variants[l].name(), rep.text());
    }
}

#[test]
fn tma_variants_are_exact_in_the_simulator() {
    let variants: Vec<Variant> = stream_axpb::variant_configs().into_iter().map(Variant::Tma).collect();
    for v in &variants {
        assert_eq!(v.problem(SHAPE.0, SHAPE.1), None);
    }
    // Two CTAs: each wraps its ring (9 tiles with 16-row boxes, 129 in the linear view).
    simulate(&variants, Some(2));
}

#[test]
fn ldg_variants_are_exact_in_the_simulator() {
    let variants: Vec<Variant> = stream_ldg::bench_configs().into_iter().map(Variant::Ldg).collect();
    simulate(&variants, None);
}

#[test]
fn shape_conditions_are_named() {
    use stream_axpb::{StoreMode, StreamConfig};
    let lin = Variant::Tma(StreamConfig { linear: true, ..StreamConfig::new(4) });
    assert!(lin.problem(3, 100).unwrap().contains("multiple of 256 elements"));
    let direct = Variant::Tma(StreamConfig { store: StoreMode::Direct, ..StreamConfig::new(4) });
    assert!(direct.problem(4, 102).unwrap().contains("multiple of 4 columns"));
    let four = Variant::Tma(StreamConfig { ctas_per_sm: 4, ..StreamConfig::new(4) });
    assert!(four.problem(64, 512).unwrap().contains("budget"));
}
