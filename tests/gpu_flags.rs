//! The flag protocol of issue 24 between CTAs of one GPU, at `.gpu` and `.sys` scope: odd CTAs
//! produce four rounds of tiles, each signalled with its round's value (`flag.signal`, a
//! release store), their even neighbours wait for each (`flag.wait`, acquire loads) and copy
//! it. The GPU run is in `.ci/gpu-bundle` (every CTA of the 16 is co-resident on an H200, as a
//! spin-wait between CTAs needs); the simulator runs the same kernels clean here.

use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig};

const ROUNDS: u32 = 4;
const THREADS: u32 = 128;

#[phaser::kernel(target = "sm_90a")]
fn pairs_gpu_scope(data: &mut [u32], flags: &mut [u32], out: &mut [u32]) {
    T.require_block(128, 1, 1);
    let tid = T.thread_idx();
    let cta = T.block_idx();
    let pair = cta / 2;
    for r in 0..4u32 {
        let slot = (pair * 4 + r) * 128 + tid;
        if cta % 2 == 1 {
            data[slot] = slot * 7 + 3;
            T.cuda.cta_sync();
            if tid == 0 {
                T.flag.signal(flags, pair, r + 1, "gpu");
            }
        } else {
            T.flag.wait(flags, pair, r + 1, "gpu");
            out[slot] = data[slot] + 1;
        }
    }
}

#[phaser::kernel(target = "sm_90a")]
fn pairs_sys_scope(data: &mut [u32], flags: &mut [u32], out: &mut [u32]) {
    T.require_block(128, 1, 1);
    let tid = T.thread_idx();
    let cta = T.block_idx();
    let pair = cta / 2;
    for r in 0..4u32 {
        let slot = (pair * 4 + r) * 128 + tid;
        if cta % 2 == 1 {
            data[slot] = slot * 7 + 3;
            T.cuda.cta_sync();
            if tid == 0 {
                T.ptx.fence.acq_rel("sys");
                T.st.ordered(flags, pair, r + 1, "relaxed", "sys");
            }
        } else {
            T.flag.wait(flags, pair, r + 1, "sys");
            out[slot] = data[slot] + 1;
        }
    }
}

/// Run `k` on `ctas` CTAs (in the simulator when `sim`): `out` must hold every round's tile
/// of every pair, plus one.
fn check(dev: &Device, sim: bool, k: &phaser::Kernel, ctas: u32) -> Option<phaser::runtime::sim::SimReport> {
    let slots = (ctas / 2 * ROUNDS * THREADS) as usize;
    let data = dev.alloc::<u32>(slots).unwrap();
    let flags = dev.alloc::<u32>((ctas / 2) as usize).unwrap();
    let out = dev.alloc::<u32>(slots).unwrap();
    let args = [Arg::buffer(&data), Arg::buffer(&flags), Arg::buffer(&out)];
    let cfg = LaunchConfig::linear(ctas, THREADS);
    let rep = if sim {
        Some(dev.simulate(k, cfg, &args).unwrap())
    } else {
        dev.launch(k, cfg, &args).unwrap();
        None
    };
    let want: Vec<u32> = (0..slots as u32).map(|s| s * 7 + 4).collect();
    assert_eq!(dev.download(&out).unwrap(), want, "every tile copied after its flag");
    assert_eq!(dev.download(&flags).unwrap(), vec![ROUNDS; (ctas / 2) as usize], "each flag at its last round");
    rep
}

#[test]
fn the_flag_protocol_is_clean_in_the_simulator() {
    let dev = Device::sim(SimConfig::default().with_seed(3));
    for k in [pairs_gpu_scope::kernel().unwrap(), pairs_sys_scope::kernel().unwrap()] {
        let rep = check(&dev, true, &k, 4).expect("a simulator report");
        assert!(rep.findings.is_empty() && !rep.has_errors(), "{}", rep.text());
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn the_flag_protocol_hands_tiles_between_ctas_at_gpu_and_sys_scope_gpu() {
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    for k in [pairs_gpu_scope::kernel().unwrap(), pairs_sys_scope::kernel().unwrap()] {
        for _ in 0..20 {
            check(&dev, false, &k, 16);
        }
    }
}
