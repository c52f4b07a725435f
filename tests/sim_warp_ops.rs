//! Warp collectives in the simulator (`shfl`, `vote`, `redux`, `match`, `ldmatrix`,
//! `stmatrix`, `warpgroup_sync`): every lane waits for every member of its mask and the
//! result is computed from all of them, also when the random scheduler runs a warp's lanes in
//! separate groups. Results are compared with CPU references written from the CUDA/PTX
//! definitions; PTX's undefined cases are findings.

use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};
use rand::{Rng, SeedableRng};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

fn inputs(seed: u64, n: usize) -> Vec<u32> {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(0..1000)).collect()
}

/// Simulate `k` on one block of `threads` with `inp` and an output of `n` (poisoned).
fn run(k: &phaser::Kernel, threads: u32, inp: &[u32], n: usize, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let i = dev.upload(inp).unwrap();
    let out = dev.upload(&vec![0xDEAD_BEEFu32; n]).unwrap();
    let rep = dev.simulate(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&i), Arg::buffer(&out)]).unwrap();
    (rep, dev.download(&out).unwrap())
}

#[phaser::kernel(target = "sm_90a")]
fn collectives(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let v = inp[lane];
    out[lane] = T.ptx.shfl.sync.bfly(v, 5);
    out[32 + lane] = T.ptx.shfl.sync.down(v, 3, 8);
    out[64 + lane] = T.ptx.shfl.sync.up(v, 2, 16);
    out[96 + lane] = T.ptx.shfl.sync.idx(v, 7, 8);
    out[128 + lane] = T.ptx.vote.sync.ballot(v % 3 == 0);
    let all = T.select(T.ptx.vote.sync.all(v < 990), 1, 0);
    let any = T.select(T.ptx.vote.sync.any(v > 900), 2, 0);
    let uni = T.select(T.ptx.vote.sync.uni(v % 2 == 0), 4, 0);
    out[160 + lane] = all + any + uni;
    out[192 + lane] = T.ptx.redux.sync.add(v);
    out[224 + lane] = T.ptx.redux.sync.min(v);
    out[256 + lane] = T.ptx.redux.sync.max(v);
    out[288 + lane] = T.ptx.redux.sync.and(v) ^ T.ptx.redux.sync.or(v) ^ T.ptx.redux.sync.xor(v);
    out[320 + lane] = T.ptx.match_sync.any(v % 4);
    out[352 + lane] = T.ptx.match_sync.all(v / 1000);
    out[384 + lane] = T.ptx.redux.sync.min((v as i32) - 500) as u32;
}

/// The CUDA definitions, written independently of the simulator's PTX formulas.
fn expected(v: &[u32]) -> Vec<u32> {
    let seg = |l: usize, w: usize| (l / w) * w;
    let mut out = vec![0u32; 416];
    let ballot = (0..32).filter(|&l| v[l] % 3 == 0).fold(0u32, |m, l| m | 1 << l);
    let flags = (v.iter().all(|&x| x < 990) as u32)
        + 2 * (v.iter().any(|&x| x > 900) as u32)
        + 4 * (v.iter().all(|&x| x % 2 == 0) || v.iter().all(|&x| x % 2 == 1)) as u32;
    let sum = v.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    let and = v.iter().fold(u32::MAX, |a, &x| a & x);
    let or = v.iter().fold(0, |a, &x| a | x);
    let xor = v.iter().fold(0, |a, &x| a ^ x);
    for l in 0..32 {
        out[l] = v[l ^ 5];
        // __shfl_down_sync(v, 3, 8): lanes past their 8-lane segment's end keep their own.
        out[32 + l] = if l % 8 + 3 < 8 { v[l + 3] } else { v[l] };
        // __shfl_up_sync(v, 2, 16): lanes before their segment's start keep their own.
        out[64 + l] = if l % 16 >= 2 { v[l - 2] } else { v[l] };
        out[96 + l] = v[seg(l, 8) + 7];
        out[128 + l] = ballot;
        out[160 + l] = flags;
        out[192 + l] = sum;
        out[224 + l] = *v.iter().min().unwrap();
        out[256 + l] = *v.iter().max().unwrap();
        out[288 + l] = and ^ or ^ xor;
        out[320 + l] = (0..32).filter(|&o| v[o] % 4 == v[l] % 4).fold(0u32, |m, o| m | 1 << o);
        out[352 + l] = u32::MAX;
        out[384 + l] = v.iter().map(|&x| x as i32 - 500).min().unwrap() as u32;
    }
    out
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

/// Each half of the warp reduces its own 16 values with its own member mask (two rounds).
#[phaser::kernel(target = "sm_90a")]
fn half_warp_sums(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let mask = T.select(lane < 16, 0x0000ffff, 0xffff0000);
    let mut s = inp[lane];
    for step in 0..4 {
        s += T.ptx.shfl.sync.bfly(s, 8 >> step, 16, mask);
    }
    out[lane] = s;
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
            for l in 0..32 {
                assert_eq!(out[l], if l < 16 { lo } else { hi }, "{s:?} seed {seed} lane {l}");
            }
        }
    }
}

/// Lanes 24-31 exit; the rest reduce: `redux` counts only the non-exited lanes of its mask
/// (PTX), so this is defined.
#[phaser::kernel(target = "sm_90a")]
fn sum_after_exit(inp: &[u32], out: &mut [u32]) {
    let t = T.thread_idx();
    if T.lane_idx() >= 24 {
        return;
    }
    out[t] = T.ptx.redux.sync.add(inp[t]);
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
        for t in 0..24 {
            assert_eq!(out[t], w0, "{s:?} thread {t}");
        }
        for t in 32..40 {
            assert_eq!(out[t], w1, "{s:?} thread {t}");
        }
    }
}

/// Lanes 0-15 shuffle with mask 0x0000ffff but read lane 20 (outside the mask): undefined.
#[phaser::kernel(target = "sm_90a")]
fn reads_outside_the_mask(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    if lane < 16 {
        out[lane] = T.ptx.shfl.sync.idx(inp[lane], 20, 32, 0x0000ffff);
    }
}

/// Lane 3 runs a vote whose mask leaves it out.
#[phaser::kernel(target = "sm_90a")]
fn outside_its_own_mask(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let mask = T.select(lane == 3, 0xfffffff0, 0xffffffff);
    out[lane] = T.ptx.vote.sync.ballot(inp[lane] > 0, mask);
}

/// The two halves shuffle at different instructions with the full mask: neither round ever
/// completes.
#[phaser::kernel(target = "sm_90a")]
fn halves_never_meet(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    if lane < 16 {
        out[lane] = T.ptx.shfl.sync.bfly(inp[lane], 1);
    } else {
        out[lane] = T.ptx.shfl.sync.bfly(inp[lane], 2);
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

/// 8x8 matrices of 16-bit elements through `ldmatrix` (plain and `.trans`) and back through
/// `stmatrix`: element (r, c) of matrix i is `i * 64 + r * 8 + c`, row r of matrix i at
/// halves[(i * 8 + r) * 8 ..] (lane `8i + r` gives its address).
#[phaser::kernel(target = "sm_90a")]
fn matrices(inp: &[u32], out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let lane = T.lane_idx();
    let m = T.alloc_shared::<u32>([128]);
    let back = T.alloc_shared::<u32>([128]);
    for k in 0..4 {
        m[lane * 4 + k] = inp[lane * 4 + k];
    }
    T.cuda.warp_sync();
    let row = T.shared_elem_addr(m, lane * 4);
    let a = T.ptx.ldmatrix.x4(row);
    let t = T.ptx.ldmatrix.x4(row, "trans");
    let one = T.ptx.ldmatrix.x1(row);
    // (Vector elements are separate registers: their indices are literals.)
    out[lane] = a[0];
    out[32 + lane] = a[1];
    out[64 + lane] = a[2];
    out[96 + lane] = a[3];
    out[128 + lane] = t[0];
    out[160 + lane] = t[1];
    out[192 + lane] = t[2];
    out[224 + lane] = t[3];
    out[256 + lane] = one[0];
    // Store the transposed fragments transposed again: the original matrices.
    let brow = T.shared_elem_addr(back, lane * 4);
    T.ptx.stmatrix.x4(brow, t[0], t[1], t[2], t[3], "trans");
    T.cuda.warp_sync();
    for k in 0..4 {
        out[288 + lane * 4 + k] = back[lane * 4 + k];
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

/// Lane 0 leaves before the warp's `ldmatrix`: PTX leaves that undefined (every lane of the
/// warp takes part), and lane 0's address is needed.
#[phaser::kernel(target = "sm_90a")]
fn ldmatrix_after_exit(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let m = T.alloc_shared::<u32>([128]);
    if lane == 0 {
        return;
    }
    let a = T.ptx.ldmatrix.x1(T.shared_elem_addr(m, lane * 4));
    out[lane] = a[0];
}

#[test]
fn an_exited_lane_makes_ldmatrix_undefined() {
    let (rep, _) = run(&ldmatrix_after_exit::kernel().unwrap(), 32, &[0; 4], 32, Strategy::RoundRobin, 1);
    let text = rep.text();
    assert!(rep.has(Category::WarpSync), "{text}");
    assert!(text.contains("lane(s) 0 of the mask have exited") || text.contains("needs lane 0's address"), "{text}");
}

/// Each warpgroup writes its slots, syncs on its own named barrier (`bar.sync 8 + w, 128`)
/// and reads a neighbour's slot within the warpgroup; without the sync the reads race.
#[phaser::kernel(target = "sm_90a")]
fn warpgroup_exchange(inp: &[u32], out: &mut [u32], #[comptime] SYNC: u32) {
    T.require_block(256, 1, 1);
    let t = T.thread_idx();
    let slots = T.alloc_shared::<u32>([256]);
    slots[t] = inp[t] * 3;
    if SYNC == 1 {
        T.cuda.warpgroup_sync();
    }
    let wg = t / 128;
    let neighbour = wg * 128 + (t + 37) % 128;
    out[t] = slots[neighbour];
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
    assert!(warpgroup_exchange::ptx_for(1).unwrap().contains(", 128;"), "bar.sync id, 128");
}
