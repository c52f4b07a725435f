//! Every gallery example, at the small and the quick size, runs in the simulator and passes
//! its check under each scheduling strategy with no checker finding; no example is skipped.
//! Each check must also fail when any one output of any launch is off by one bit, and every
//! kernel a setup launches is one its example lists (what the ptxas tests assemble).

use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::{Device, Target};
use phaser_examples::gallery::{examples, run_problem, Size};

/// Thread-instructions one example may take at the quick size, all launches together: a
/// deterministic bound that keeps `phaser run` in the simulator to seconds (the largest,
/// cluster_multicast, takes about 2 M).
const QUICK_BUDGET: u64 = 5_000_000;

// One test per strategy, so the test harness runs them on separate cores (the simulator is
// single-threaded per launch); the seeds are the ones the one test used in turn.
#[test]
fn gallery_examples_pass_in_the_simulator_round_robin() {
    gallery_examples_pass(Strategy::RoundRobin, 0x1000);
}

#[test]
fn gallery_examples_pass_in_the_simulator_random() {
    gallery_examples_pass(Strategy::Random, 0x1001);
}

#[test]
fn gallery_examples_pass_in_the_simulator_adversarial() {
    gallery_examples_pass(Strategy::Adversarial, 0x1002);
}

fn gallery_examples_pass(s: Strategy, seed: u64) {
    let mut ran = 0;
    for e in examples() {
        for size in [Size::Small, Size::Quick] {
            let what = format!("{} ({size:?}, {s:?}, seed {seed})", e.name);
            let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
            let mut p = (e.setup)(&dev, size, seed).unwrap_or_else(|err| panic!("{what}: setup: {err}"));
            let listed = (e.kernels)(Target::Sm90a).unwrap();
            for l in &p.launches {
                assert!(
                    listed.contains(&l.kernel),
                    "{what}: launches `{}`, which `kernels` does not list",
                    l.kernel.name()
                );
            }
            let mut out = run_problem(&dev, &mut p).unwrap_or_else(|err| panic!("{what}: {err}"));
            let o = (e.check)(&p, &out);
            assert!(o.passed, "{what}: {}", o.detail);
            let mut work = 0;
            for (l, launch) in out.launches.iter().enumerate() {
                let rep = launch.sim.as_ref().unwrap_or_else(|| panic!("{what}: launch {l} has no simulator report"));
                assert!(rep.findings.is_empty(), "{what}: launch {l}:\n{}", rep.text());
                work += rep.stats.thread_instructions;
            }
            if size == Size::Quick {
                assert!(work <= QUICK_BUDGET, "{what}: {work} thread-instructions exceed the quick budget");
            }
            for l in 0..out.launches.len() {
                for k in 0..out.output_count(l) {
                    out.corrupt(l, k);
                    assert!(
                        !(e.check)(&p, &out).passed,
                        "{what}: the check missed a flipped bit in output {k} of launch {l}"
                    );
                    out.corrupt(l, k);
                }
            }
            assert!((e.check)(&p, &out).passed, "{what}: corrupting twice restores the outputs");
            ran += 1;
        }
    }
    assert_eq!(ran, examples().len() * 2);
}
