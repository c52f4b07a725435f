//! Exhaustive exploration of the DSL GEMM's synchronization skeleton (scratch: measuring).

use phaser::runtime::sim::SimConfig;
use phaser::Device;
use phaser_examples::gallery::{explore_problem, gemm_dsl};

#[test]
fn measure() {
    let tiles = gemm_dsl::Tiles { block_n: 64, wg_m: 64, stages: 2, cluster: 1, group_m: 1 };
    let n: u64 = std::env::var("GEMM_EXECUTIONS").map_or(1, |s| s.parse().unwrap());
    let sc = SimConfig { echo_printf: false, trace: false, explore_barriers_only: true, explore_max_executions: n, ..SimConfig::default() };
    let dev = Device::sim(sc.clone());
    let mut p = gemm_dsl::setup_tiles(&dev, tiles, (128, 64, 192), 1, 7, true).unwrap();
    let t = std::time::Instant::now();
    let r = phaser_examples::gallery::simulate_problem(&dev, &mut p, &sc).unwrap();
    println!("simulate: {:?} {:?}", t.elapsed(), r[0].stats);
    let mut p = gemm_dsl::setup_tiles(&dev, tiles, (128, 64, 192), 1, 7, true).unwrap();
    for r in explore_problem(&dev, &mut p).unwrap() {
        println!("{}", r.summary());
    }
}
