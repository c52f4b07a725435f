//! `printf`, clocks, `nanosleep`, programmatic dependent launch, inline PTX and the pipeline's
//! try/token acquires in the simulator. The printf kernels are the seed lesson's (CuTe's
//! mbarrier API, by its names): the simulator prints what the GPU prints.

mod ops_kernels;
use ops_kernels::*;

use phaser::codegen::ptx_text;
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

fn dev(s: Strategy, seed: u64) -> Device {
    let mut cfg = SimConfig::default().with_strategy(s).with_seed(seed);
    cfg.echo_printf = false;
    Device::sim(cfg)
}

fn run(k: &phaser::Kernel, cfg: LaunchConfig, args: &[Arg], s: Strategy, seed: u64) -> SimReport {
    dev(s, seed).simulate(k, cfg, args).unwrap()
}

#[test]
fn printf_prints_what_the_lesson_prints() {
    let k = lesson_arrive_wait::kernel().unwrap();
    let rep = run(&k, LaunchConfig::linear(1, 8), &[Arg::scalar(4u32)], Strategy::RoundRobin, 1);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(rep.output(), lesson_arrive_wait_text());
    assert_eq!(rep.printed.len(), 9);
    assert!(rep.printed.iter().all(|p| p.ctaid == [0, 0, 0]));
    // Under any schedule the barrier orders every arrival's line before every wait's line.
    for s in STRATEGIES {
        for seed in 0..4 {
            let rep = run(&k, LaunchConfig::linear(1, 8), &[Arg::scalar(4u32)], s, seed);
            let out = rep.output();
            let mut got: Vec<&str> = out.lines().collect();
            let last_arrive = got.iter().rposition(|l| l.contains("arriving")).unwrap();
            let first_wait = got.iter().position(|l| l.contains("wait passed")).unwrap();
            assert!(last_arrive < first_wait, "{s:?} seed {seed}:\n{out}");
            assert!(got[0].starts_with("[exp 1]"), "{s:?}: {out}");
            let want = lesson_arrive_wait_text();
            let mut want: Vec<&str> = want.lines().collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{s:?} seed {seed}");
        }
    }
    let k = lesson_phase_flip::kernel().unwrap();
    let rep = run(&k, LaunchConfig::linear(1, 32), &[], Strategy::Random, 3);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(rep.output(), lesson_phase_flip_text());
}

#[test]
fn inline_ptx_is_reported_unsupported_at_its_line() {
    let src = include_str!("ops_kernels/mod.rs");
    let line = src.lines().position(|l| l.contains("T.asm(\"add.u32 {1}, {0}, 41;\"")).unwrap() as u32 + 1;
    let d = dev(Strategy::RoundRobin, 1);
    let out = d.upload(&[0u32; 4]).unwrap();
    let rep =
        d.simulate(&with_inline_ptx::kernel().unwrap(), LaunchConfig::linear(1, 4), &[Arg::buffer(&out)]).unwrap();
    let f =
        rep.findings.iter().find(|f| f.category == Category::Unsupported).unwrap_or_else(|| panic!("{}", rep.text()));
    assert!(f.message.contains("inline PTX"), "{}", f.message);
    assert_eq!(f.loc.map(|l| l.line), Some(line), "{f}");
    let ptx = with_inline_ptx::ptx().unwrap();
    assert!(ptx_text::has(&ptx, "add.u32 %r*, %r*, 41"), "the template is in the PTX:\n{ptx}");
}

#[test]
fn clocks_advance_with_the_work_done() {
    for s in STRATEGIES {
        let d = dev(s, 2);
        let out = d.upload(&[u64::MAX; 64]).unwrap();
        let rep = d.simulate(&clocks::kernel().unwrap(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        for (i, v) in d.download(&out).unwrap().into_iter().enumerate() {
            // 50 iterations of at least 4 instructions each lie between the reads.
            assert!((200..1 << 20).contains(&v), "{s:?}: delta {i} = {v}");
        }
    }
}

#[test]
fn a_backoff_loop_that_can_never_succeed_is_still_found_stuck() {
    for s in STRATEGIES {
        let d = dev(s, 4);
        let out = d.upload(&[0u32; 32]).unwrap();
        let stuck = |backoff: u32| {
            let k = backoff_poll::kernel_for(1, backoff).unwrap();
            let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
            assert!(
                rep.has(Category::Deadlock) || rep.has(Category::InfiniteLoop),
                "{s:?} backoff {backoff}:\n{}",
                rep.text()
            );
            rep.categories()
        };
        assert_eq!(stuck(1), stuck(0), "{s:?}: nanosleep is not progress");
        let k = backoff_poll::kernel_for(2, 1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}: both arrivals come\n{}", rep.text());
        assert_eq!(d.download(&out).unwrap(), vec![1u32; 32]);
    }
}

#[test]
fn a_dependent_launch_reads_what_its_predecessor_wrote() {
    let d = dev(Strategy::Random, 5);
    let mut data = d.upload(&[0u32; 256]).unwrap();
    let mut out = d.upload(&[0u32; 256]).unwrap();
    pdl_producer::launch(&d, LaunchConfig::linear(2, 128), &mut data).unwrap();
    pdl_consumer::launch(&d, LaunchConfig::linear(2, 128).with_programmatic_dependent_launch(), &data, &mut out)
        .unwrap();
    let out = d.download(&out).unwrap();
    for (i, v) in out.into_iter().enumerate() {
        let i = i as u32;
        assert_eq!(v, (i * 7 + 1) * (i + 1));
    }
    let ptx = pdl_consumer::ptx().unwrap();
    assert!(ptx_text::has(&ptx, "griddepcontrol.wait"), "{ptx}");
    let producer = pdl_producer::ptx().unwrap();
    assert!(ptx_text::has(&producer, "griddepcontrol.launch_dependents"), "{producer}");
}

#[test]
fn try_and_token_acquires_keep_the_ring_in_order() {
    let n = 9u32;
    for s in STRATEGIES {
        for seed in 0..3 {
            let d = dev(s, seed);
            let out = d.upload(&vec![0u32; (n * 32) as usize]).unwrap();
            let k = token_pipeline::kernel().unwrap();
            let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out), Arg::scalar(n)]).unwrap();
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            let out = d.download(&out).unwrap();
            for i in 0..n {
                for l in 0..32 {
                    assert_eq!(out[(i * 32 + l) as usize], i * 100 + l, "{s:?} item {i} lane {l}");
                }
            }
        }
    }
}

/// The GPU test's scenarios (`gpu_ops`) pass in the simulator under every strategy: the GPU
/// runs kernels and references already known to agree.
#[test]
fn every_gpu_scenario_passes_in_the_simulator() {
    for (name, run) in scenarios() {
        for s in STRATEGIES {
            run(&dev(s, 21)).unwrap_or_else(|e| panic!("{name} ({s:?}): {e}"));
        }
    }
}

#[test]
fn a_dsl_cluster_pipeline_multicasts_and_releases_every_cta() {
    for s in STRATEGIES {
        for seed in 0..3 {
            scenario_cluster_pipeline(&dev(s, seed)).unwrap_or_else(|e| panic!("{s:?} seed {seed}: {e}"));
        }
    }
    // One release per consumer warp to each of the 2 CTAs' `empty` barriers.
    let ptx = dsl_cluster_pipeline::ptx().unwrap();
    assert!(ptx_text::has(&ptx, "mapa.shared::cluster.u32 %r*, %r*, _"), "{ptx}");
    assert!(ptx_text::has(&ptx, "cp.async.bulk.tensor.*.multicast::cluster*"), "{ptx}");
}

#[test]
fn advance_by_n_walks_n_stages_and_flips_the_phase_at_each_wrap() {
    let d = dev(Strategy::RoundRobin, 0);
    let out = d.upload(&[0u32; 5]).unwrap();
    d.launch(&advance_n::kernel().unwrap(), LaunchConfig::linear(1, 1), &[Arg::buffer(&out)]).unwrap();
    // Stage after n advances is n % 3; the phase flips once per wrap: (n / 3) % 2.
    let at = |n: u32| (n % 3) * 10 + (n / 3) % 2;
    assert_eq!(d.download(&out).unwrap(), vec![at(0), at(2), at(4), at(9), at(10)]);
}
