//! Every gallery example runs in the simulator (quick size) and passes its host check, under
//! each scheduling strategy, with no checker findings.

use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::Device;
use phaser_examples::gallery::{examples, Size};

#[test]
fn gallery_examples_pass_in_the_simulator() {
    let strategies = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];
    let mut ran = 0;
    for e in examples() {
        if e.gpu_only {
            continue;
        }
        for (i, s) in strategies.iter().enumerate() {
            let dev = Device::sim(SimConfig::default().with_strategy(*s).with_seed(0x1000 + i as u64));
            let t0 = std::time::Instant::now();
            let o = (e.run)(&dev, Size::Quick).unwrap_or_else(|err| panic!("{} ({s:?}): {err}", e.name));
            assert!(o.passed, "{} ({s:?}): {}", e.name, o.detail);
            assert!(t0.elapsed().as_secs() < 30, "{} took {:?} in the simulator", e.name, t0.elapsed());
            ran += 1;
        }
    }
    assert!(ran >= 9, "expected at least the three seed examples under three strategies, ran {ran}");
}
