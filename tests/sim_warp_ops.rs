//! Warp collectives in the simulator (`shfl`, `vote`, `redux`, `match`, `ldmatrix`,
//! `stmatrix`, `warpgroup_sync`): every lane waits for every member of its mask and the
//! result is computed from all of them, also when the random scheduler runs a warp's lanes in
//! separate groups. Results are compared with CPU references written from the CUDA/PTX
//! definitions; PTX's undefined cases are findings.

mod ops_kernels;
use ops_kernels::*;

use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

/// Simulate `k` on one block of `threads` with `inp` and an output of `n` (poisoned).
fn run(k: &phaser::Kernel, threads: u32, inp: &[u32], n: usize, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let i = dev.upload(inp).unwrap();
    let out = dev.upload(&vec![0xDEAD_BEEFu32; n]).unwrap();
    let rep = dev.simulate(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&i), Arg::buffer(&out)]).unwrap();
    (rep, dev.download(&out).unwrap())
}

#[test]
fn collectives_compute_from_every_lane_whatever_the_lane_groups() {
    let k = collectives::kernel().unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        for seed in 0..6u64 {
            let v = inputs(seed, 32);
            let (rep, out) = run(&k, 32, &v, 416, s, seed * 7 + i as u64);
            assert!(rep.findings.is_empty(), "{s:?} seed {seed}:\n{}", rep.text());
            let want = expected(&v);
            for (j, (g, w)) in out.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{s:?} seed {seed}: out[{j}] (block {}, lane {})", j / 32, j % 32);
            }
        }
    }
}

#[test]
fn disjoint_masks_form_separate_rounds() {
    let k = half_warp_sums::kernel().unwrap();
    for s in STRATEGIES {
        for seed in 0..4u64 {
            let v = inputs(seed + 100, 32);
            let (rep, out) = run(&k, 32, &v, 32, s, seed);
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            let lo: u32 = v[..16].iter().sum();
            let hi: u32 = v[16..].iter().sum();
            for (l, o) in out.iter().enumerate() {
                assert_eq!(*o, if l < 16 { lo } else { hi }, "{s:?} seed {seed} lane {l}");
            }
        }
    }
}

#[test]
fn reductions_count_the_lanes_that_did_not_exit() {
    let k = sum_after_exit::kernel().unwrap();
    // 40 threads: warp 1 has only 8 lanes (the others do not exist).
    let v = inputs(9, 40);
    for s in STRATEGIES {
        let (rep, out) = run(&k, 40, &v, 40, s, 3);
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        let w0: u32 = v[..24].iter().sum();
        let w1: u32 = v[32..40].iter().sum();
        assert_eq!(&out[..24], &[w0; 24], "{s:?}: warp 0");
        assert_eq!(&out[32..40], &[w1; 8], "{s:?}: warp 1");
    }
}

#[test]
fn undefined_collectives_are_findings_naming_the_lanes() {
    let v = inputs(1, 32);
    for s in STRATEGIES {
        let (rep, _) = run(&reads_outside_the_mask::kernel().unwrap(), 32, &v, 32, s, 5);
        let f =
            rep.findings.iter().find(|f| f.category == Category::WarpSync).unwrap_or_else(|| panic!("{}", rep.text()));
        assert!(f.message.contains("reads lane 20") && f.message.contains("does not take part"), "{}", f.message);

        let (rep, _) = run(&outside_its_own_mask::kernel().unwrap(), 32, &v, 32, s, 5);
        let f =
            rep.findings.iter().find(|f| f.category == Category::WarpSync).unwrap_or_else(|| panic!("{}", rep.text()));
        assert_eq!(f.thread, Some(3));
        assert!(
            f.message.contains("vote.sync.ballot") && f.message.contains("whose mask does not include it"),
            "{}",
            f.message
        );

        let (rep, _) = run(&halves_never_meet::kernel().unwrap(), 32, &v, 32, s, 5);
        assert!(rep.has(Category::Deadlock), "{s:?}:\n{}", rep.text());
        let text = rep.text();
        assert!(text.contains("waits at `shfl.sync.bfly.b32`"), "{text}");
        assert!(
            text.contains("lane(s) 0-15 arrived, lane(s) 16-31 have not")
                || text.contains("lane(s) 16-31 arrived, lane(s) 0-15 have not"),
            "{text}"
        );
    }
}

#[test]
fn ldmatrix_and_stmatrix_move_fragments_in_the_mma_layout() {
    // Packed pairs: u32 j of row (i, r) holds elements (2j, 2j + 1).
    let elem = |i: u32, r: u32, c: u32| i * 64 + r * 8 + c;
    let input: Vec<u32> = (0..128u32)
        .map(|w| (w / 32, (w / 4) % 8, (w % 4) * 2))
        .map(|(i, r, c)| elem(i, r, c) | elem(i, r, c + 1) << 16)
        .collect();
    let k = matrices::kernel().unwrap();
    for s in STRATEGIES {
        let (rep, out) = run(&k, 32, &input, 416, s, 11);
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        for i in 0..4u32 {
            for t in 0..32u32 {
                let (r, c) = (t / 4, 2 * (t % 4));
                let plain = elem(i, r, c) | elem(i, r, c + 1) << 16;
                let trans = elem(i, c, r) | elem(i, c + 1, r) << 16;
                assert_eq!(out[(i * 32 + t) as usize], plain, "{s:?} matrix {i} thread {t}");
                assert_eq!(out[(128 + i * 32 + t) as usize], trans, "{s:?} transposed matrix {i} thread {t}");
            }
        }
        assert_eq!(&out[256..288], &out[0..32], "x1 is matrix 0 of x4");
        assert_eq!(&out[288..416], &input[..], "stmatrix.trans of the transposed fragments restores the matrices");
    }
}

#[test]
fn an_exited_lane_makes_ldmatrix_undefined() {
    let (rep, _) = run(&ldmatrix_after_exit::kernel().unwrap(), 32, &[0; 4], 32, Strategy::RoundRobin, 1);
    let text = rep.text();
    assert!(rep.has(Category::WarpSync), "{text}");
    assert!(text.contains("lane(s) 0 of the mask have exited") || text.contains("needs lane 0's address"), "{text}");
}

#[test]
fn warpgroup_sync_orders_the_warpgroup_only() {
    let v = inputs(4, 256);
    for s in STRATEGIES {
        let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(2));
        let i = dev.upload(&v).unwrap();
        let out = dev.upload(&[0u32; 256]).unwrap();
        let k = warpgroup_exchange::kernel_for(1).unwrap();
        let rep = dev.simulate(&k, LaunchConfig::linear(1, 256), &[Arg::buffer(&i), Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        let out = dev.download(&out).unwrap();
        for t in 0..256 {
            assert_eq!(out[t], v[(t / 128) * 128 + (t + 37) % 128] * 3, "{s:?} thread {t}");
        }
        let k = warpgroup_exchange::kernel_for(0).unwrap();
        let out = dev.upload(&[0u32; 256]).unwrap();
        let rep = dev.simulate(&k, LaunchConfig::linear(1, 256), &[Arg::buffer(&i), Arg::buffer(&out)]).unwrap();
        assert!(
            rep.has(Category::SharedRace) || rep.has(Category::UninitializedSharedRead),
            "{s:?} without the sync:\n{}",
            rep.text()
        );
    }
    let ptx = warpgroup_exchange::ptx_for(1).unwrap();
    assert!(phaser::codegen::ptx_text::has(&ptx, "bar.sync _, 128"), "bar.sync id, 128:\n{ptx}");
}
