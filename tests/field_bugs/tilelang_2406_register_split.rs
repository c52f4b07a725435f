//! tile-ai/tilelang#2406, a `setmaxnreg` split that over-subscribes the registers the block
//! was launched with deadlocks: <https://github.com/tile-ai/tilelang/issues/2406>
//!
//! The protocol bug: a warp-specialized kernel of 3 warp groups launched with 168 registers per
//! thread raises its two consumer warp groups to 232 without the producer warp group giving
//! registers back first (`setmaxnreg.dec`). 8 x 232 + 4 x 168 exceeds the 12 x 168 the CTA
//! holds, so the consumer warps that find no room wait in `setmaxnreg.inc` forever. With the
//! producer's `dec(40)`, 4 x 40 + 8 x 232 = 12 x 168 fits exactly (CUTLASS's
//! `warpgroup_reg_dealloc<40>` / `warpgroup_reg_alloc<232>`).
//!
//! The finding names the CTA's register pool, not a barrier: `setmaxnreg` waits on no mbarrier.

use crate::common::{clean, dev, STRATEGIES};
use phaser::runtime::sim::Category;
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("tilelang_2406_register_split.rs");

/// `DEC = 0` is the bug: the producer warp group keeps its 168 registers.
#[phaser::kernel(target = "sm_90a")]
fn register_split_ws(out: &mut [u32], #[comptime] DEC: u32) {
    T.require_block(384, 1, 1);
    T.max_registers(168);
    let wg = T.warpgroup_idx();
    if wg == 0 {
        if DEC == 1 {
            T.ptx.setmaxnreg.dec(40);
        }
    } else {
        T.ptx.setmaxnreg.inc(232); // CONSUMER-INC
    }
    T.cuda.cta_sync();
    out[T.thread_idx()] = wg + 10;
}

#[test]
fn an_over_subscribing_register_split_hangs_at_the_consumers_setmaxnreg() {
    let launch = LaunchConfig::linear(1, 384);
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(384).unwrap();
        let rep = d.simulate(&register_split_ws::kernel_for(0).unwrap(), launch, &[Arg::buffer(&out)]).unwrap();
        let f = SRC.finding_at(&rep, Category::Deadlock, "CONSUMER-INC");
        assert!(f.message.contains("waits at `setmaxnreg.inc` for 232 registers per thread"), "{}", f.message);
        assert!(f.message.contains("the launch's .maxnreg 168 per thread for each of its 12 warps"), "{}", f.message);
        assert!(f.message.contains("over-subscribe"), "{}", f.message);
    }
}

#[test]
fn the_producers_dec_makes_room_for_the_consumers() {
    let launch = LaunchConfig::linear(1, 384);
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(384).unwrap();
        clean(&d.simulate(&register_split_ws::kernel_for(1).unwrap(), launch, &[Arg::buffer(&out)]).unwrap());
        assert_eq!(d.download(&out).unwrap(), (0..384).map(|t| t / 128 + 10).collect::<Vec<u32>>(), "{s:?}");
    }
}
