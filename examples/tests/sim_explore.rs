//! Exhaustive exploration of the gallery's small instances: the seeds' three experiments
//! (builder and DSL versions) and the depth-2 pipelines at 3 iterations explore completely
//! with no finding, and the outputs of the last execution are right.

use phaser::runtime::sim::{ExploreReport, SimConfig};
use phaser::Device;
use phaser_examples::gallery::{self, explore_problem, pipeline, run_problem, Problem, Size};

fn device() -> Device {
    Device::sim(SimConfig { echo_printf: false, ..SimConfig::default() })
}

/// Explore every launch of `p`, assert each is complete, and return the reports.
fn explore_all(dev: &Device, mut p: Problem) -> Vec<ExploreReport> {
    let reports = explore_problem(dev, &mut p).unwrap();
    for e in &reports {
        println!("{}", e.summary());
        assert!(e.complete(), "{e}");
        assert!(e.executions >= 1 && e.states >= 1, "{e}");
    }
    reports
}

/// The example `name` explored, then run once more and checked against its reference.
fn explore_example(name: &str) -> Vec<ExploreReport> {
    let e = gallery::find(name).unwrap_or_else(|| panic!("no example {name}"));
    let dev = device();
    let reports = explore_all(&dev, (e.setup)(&dev, Size::Small, 7).unwrap());
    let mut p = (e.setup)(&dev, Size::Small, 7).unwrap();
    let out = run_problem(&dev, &mut p).unwrap();
    let outcome = (e.check)(&p, &out);
    assert!(outcome.passed, "{name}: {}", outcome.detail);
    reports
}

#[test]
fn the_seeds_explore_completely() {
    for name in ["seed_thread_arrive_wait", "seed_producer_consumer", "seed_phase_flip"] {
        explore_example(name);
    }
}

#[test]
fn the_dsl_seeds_explore_completely() {
    for name in ["dsl_seed_thread_arrive_wait", "dsl_seed_producer_consumer", "dsl_seed_phase_flip"] {
        explore_example(name);
    }
}

#[test]
fn the_full_empty_pipeline_explores_completely_at_3_iterations() {
    let dev = device();
    let r = explore_all(&dev, pipeline::setup_fe_iters(&dev, 3, 7).unwrap());
    // Producer and consumer warps interleave around every barrier: more than one execution.
    assert!(r[0].executions > 1, "{}", r[0]);
}

/// The bulk pipeline (bulk copies in pieces, bulk stores, their groups) has more executions
/// than a CI test may run: explored up to a bound, which the report states.
#[test]
fn the_bulk_pipeline_explored_to_a_bound_has_no_finding() {
    let dev = Device::sim(SimConfig { echo_printf: false, explore_max_executions: 2000, ..SimConfig::default() });
    let mut p = pipeline::setup_bulk_iters(&dev, 3, 7).unwrap();
    let e = &explore_problem(&dev, &mut p).unwrap()[0];
    println!("{}", e.summary());
    assert!(e.counterexample.is_none(), "{e}");
    assert_eq!((e.executions, e.bound_hit), (2000, Some(phaser::runtime::sim::BoundHit::Executions)), "{e}");
    assert!(e.summary().contains("NOT complete") && e.summary().contains("execution bound (2000)"), "{e}");
}
