//! Vector loads and stores, atomics (global, shared, another CTA's shared memory; across
//! clusters through the grid's epochs), 16-bit pairs, distributed shared memory (typed
//! `mapa`, CTA-to-CTA bulk copies, bulk multicast, predicated remote arrivals) in the
//! simulator, against CPU references.

mod ops_kernels;
use ops_kernels::*;

use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

fn dev(s: Strategy, seed: u64) -> Device {
    Device::sim(SimConfig::default().with_strategy(s).with_seed(seed))
}

#[test]
fn vector_loads_and_stores_move_consecutive_elements() {
    let src: Vec<u32> = (0..256u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let k = vectors::kernel().unwrap();
    let ptx = vectors::ptx().unwrap();
    assert!(phaser::codegen::ptx_text::has(&ptx, "ld.global.nc.v4.u32 {%r*, %r*, %r*, %r*}, [%rd*]"), "{ptx}");
    for s in STRATEGIES {
        let d = dev(s, 3);
        let a = d.upload(&src).unwrap();
        let out = d.upload(&[0u32; 320]).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&a), Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        let out = d.download(&out).unwrap();
        for t in 0..64usize {
            let n = (t + 1) % 64;
            let rev = [src[4 * n + 3], src[4 * n + 2], src[4 * n + 1], src[4 * n]];
            assert_eq!(out[4 * t..4 * t + 4], [rev[0], rev[1], rev[2].wrapping_add(src[0]), rev[3]], "{s:?} t {t}");
            assert_eq!(out[256 + t], src[4 * n] ^ src[4 * n + 1] ^ src[4 * n + 2] ^ src[4 * n + 3]);
        }
    }
}

#[test]
fn a_misaligned_vector_load_is_a_finding() {
    let d = dev(Strategy::RoundRobin, 1);
    let a = d.upload(&[0u32; 16]).unwrap();
    let out = d.upload(&[0u32; 1]).unwrap();
    let k = misaligned_vector::kernel().unwrap();
    let rep =
        d.simulate(&k, LaunchConfig::linear(1, 1), &[Arg::buffer(&a), Arg::buffer(&out), Arg::scalar(2u32)]).unwrap();
    let f =
        rep.findings.iter().find(|f| f.category == Category::Misaligned).unwrap_or_else(|| panic!("{}", rep.text()));
    assert!(f.message.contains("16-byte vector load") && f.message.contains("not 16-byte aligned"), "{}", f.message);
}

#[test]
fn atomics_are_exact_across_ctas_and_spaces() {
    let k = atomics::kernel().unwrap();
    let ctas = 4u32;
    let n = (ctas * 64) as usize;
    let keys: Vec<u32> = (0..n as u32).map(|id| (id * 37 + 11) % 1000).collect();
    for s in STRATEGIES {
        for threads in [1, 2] {
            let mut cfg = SimConfig::default().with_strategy(s).with_seed(5);
            cfg.threads = threads;
            let d = Device::sim(cfg);
            let mut init = vec![0u32; 16];
            init[2] = u32::MAX;
            let g = d.upload(&init).unwrap();
            let out = d.upload(&vec![0u32; 1024 + 16]).unwrap();
            let rep = d.simulate(&k, LaunchConfig::linear(ctas, 64), &[Arg::buffer(&g), Arg::buffer(&out)]).unwrap();
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            let g = d.download(&g).unwrap();
            let out = d.download(&out).unwrap();
            assert_eq!(g[0], n as u32);
            assert_eq!(g[1], *keys.iter().max().unwrap());
            assert_eq!(g[2], *keys.iter().min().unwrap());
            assert_eq!(g[3], u32::MAX, "every bit set by some thread");
            assert_eq!(g[4], (0..n as u32).fold(0, |a, x| a ^ x));
            assert_eq!(g[5], (0..n as u32).sum::<u32>());
            assert_eq!(g[6], *keys.iter().max().unwrap());
            assert_eq!(g[7], n as u32, "every compare-and-swap increment lands once");
            let mut seen: Vec<u32> = out[..n].to_vec();
            seen.push(g[8]);
            seen.sort();
            assert_eq!(seen, (0..=n as u32).collect::<Vec<_>>(), "exch hands every value on exactly once");
            for c in 0..ctas as usize {
                let cta_keys = &keys[c * 64..(c + 1) * 64];
                assert_eq!(out[1024 + c * 4], (0..64).sum::<u32>(), "shared add in CTA {c}");
                assert_eq!(out[1024 + c * 4 + 1], cta_keys.iter().min().unwrap() + 5, "shared red.min");
                assert_eq!(out[1024 + c * 4 + 3], 0, "shared and cleared every bit");
            }
        }
    }
}

#[test]
fn half_pairs_round_to_nearest_even_and_unpack_exactly() {
    use half::{bf16, f16};
    let mut src: Vec<f32> = (0..62).map(|i| (i as f32 - 31.0) * 1.0078125 + 1.0 / (i as f32 + 3.0)).collect();
    src.extend([f32::NAN, 1.0e-40]);
    let k = pairs::kernel().unwrap();
    let d = dev(Strategy::Random, 9);
    let a = d.upload(&src).unwrap();
    let out = d.upload(&[0u32; 64]).unwrap();
    let back = d.upload(&[0f32; 128]).unwrap();
    let rep =
        d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&a), Arg::buffer(&out), Arg::buffer(&back)]).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    let (out, back) = (d.download(&out).unwrap(), d.download(&back).unwrap());
    // The GPU's `cvt.rn` gives the canonical NaN.
    let b16 = |x: f32| if x.is_nan() { 0x7fff } else { bf16::from_f32(x).to_bits() as u32 };
    let h16 = |x: f32| if x.is_nan() { 0x7fff } else { f16::from_f32(x).to_bits() as u32 };
    for t in 0..32 {
        let (lo, hi) = (src[2 * t], src[2 * t + 1]);
        assert_eq!(out[2 * t], b16(lo) | b16(hi) << 16, "bf16x2 of thread {t}");
        assert_eq!(out[2 * t + 1], h16(lo) | h16(hi) << 16, "f16x2 of thread {t}");
        let exact = |bits: u32, wide: f32| {
            bits == 0x7fff && wide.is_nan() || wide.to_bits() == bf16::from_bits(bits as u16).to_f32().to_bits()
        };
        assert!(exact(b16(lo), back[4 * t]) && exact(b16(hi), back[4 * t + 1]), "bf16 unpack of thread {t}");
        let exact_h = |bits: u32, wide: f32| {
            bits == 0x7fff && wide.is_nan() || wide.to_bits() == f16::from_bits(bits as u16).to_f32().to_bits()
        };
        assert!(exact_h(h16(lo), back[4 * t + 2]) && exact_h(h16(hi), back[4 * t + 3]), "f16 unpack of thread {t}");
    }
}

#[test]
fn ctas_read_write_and_add_into_each_others_shared_memory() {
    let k = dsmem_exchange::kernel().unwrap();
    for s in STRATEGIES {
        let d = dev(s, 4);
        let out = d.upload(&[0u32; 258]).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 64), &[Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        let out = d.download(&out).unwrap();
        for rank in 0..2u32 {
            for t in 0..64u32 {
                assert_eq!(out[(rank * 64 + t) as usize], (1 - rank) * 1000 + t, "{s:?} read of rank {rank}");
                assert_eq!(out[(128 + rank * 64 + t) as usize], t * 2 + (1 - rank), "{s:?} written by the peer");
            }
            assert_eq!(out[256 + rank as usize], (1..=64).sum::<u32>(), "{s:?} remote atomic adds");
        }
    }
}

#[test]
fn a_cta_copies_into_another_ctas_shared_memory() {
    for s in STRATEGIES {
        let d = dev(s, 8);
        let out = d.upload(&[0u32; 16]).unwrap();
        let k = cta_to_cta_copy::kernel_for(1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        assert_eq!(d.download(&out).unwrap(), (0..16).map(|t| t * 3).collect::<Vec<u32>>(), "{s:?}");
        let k = cta_to_cta_copy::kernel_for(0).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap();
        assert!(
            rep.has(Category::ProxyFence),
            "{s:?}: the copy reads generic writes without a proxy fence\n{}",
            rep.text()
        );
    }
}

#[test]
fn bulk_multicast_fills_every_cta_and_predicated_arrivals_arrive_where_true() {
    let src: Vec<u32> = (0..32u32).map(|i| i * 11 + 1).collect();
    for s in STRATEGIES {
        let d = dev(s, 6);
        let a = d.upload(&src).unwrap();
        let out = d.upload(&[0u32; 64]).unwrap();
        let k = multicast::kernel_for(1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&a), Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        let out = d.download(&out).unwrap();
        assert_eq!(&out[..32], &src[..], "{s:?} rank 0");
        assert_eq!(&out[32..], &src[..], "{s:?} rank 1");
        let k = multicast::kernel_for(0).unwrap();
        let out = d.upload(&[0u32; 64]).unwrap();
        let rep: SimReport =
            d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&a), Arg::buffer(&out)]).unwrap();
        assert!(rep.has(Category::Deadlock), "{s:?}: no predicate held, rank 1 waits forever\n{}", rep.text());
    }
}

#[test]
fn release_and_acquire_atomics_order_a_flag_hand_off() {
    for s in STRATEGIES {
        let d = dev(s, 12);
        let out = d.upload(&[0u32; 32]).unwrap();
        let rep = d
            .simulate(&flag_handoff::kernel_for(1).unwrap(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)])
            .unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        assert_eq!(d.download(&out).unwrap(), (0..32).map(|l| l * 5 + 3).collect::<Vec<u32>>());
        let rep = d
            .simulate(&flag_handoff::kernel_for(0).unwrap(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)])
            .unwrap();
        assert!(rep.has(Category::SharedRace), "{s:?}: relaxed atomics order nothing\n{}", rep.text());
    }
}
