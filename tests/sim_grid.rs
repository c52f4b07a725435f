//! The grid's clusters run side by side and, between epochs, on several cores: CTAs that hand
//! work out through atomics or wait for each other's flags finish, and the result (outputs,
//! findings, statistics, trace) is the same for any number of threads.

use phaser::runtime::sim::{SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};

/// A persistent scheduler: thread 0 of each CTA takes tile numbers from a global counter
/// until they run out, and marks each tile with its CTA.
#[phaser::kernel(target = "sm_90a")]
fn tile_scheduler(counter: &mut [u32], owner: &mut [u32], ntiles: u32) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    if tid == 0 {
        let mut t = T.atomic_add(counter, 0, 1);
        while t < ntiles {
            owner[t] = T.block_idx() + 1;
            t = T.atomic_add(counter, 0, 1);
        }
    }
}

/// CTA `i` waits until CTA `i + 1` raised its flag, then raises its own: the last CTA starts
/// the chain, the first finishes it.
#[phaser::kernel(target = "sm_90a")]
fn flag_chain(flags: &mut [u32], order: &mut [u32]) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    let me = T.block_idx();
    let last = T.grid_dim() - 1;
    if tid == 0 {
        if me < last {
            while T.ptx.ld.global::<u32>(T.global_elem_addr(flags, me + 1)) == 0 {}
        }
        let rank = T.atomic_add(order, 0, 1);
        order[me + 1] = rank;
        flags[me] = 1;
    }
}

fn scheduler(threads: usize, s: Strategy) -> (SimReport, Vec<u32>, Vec<u32>) {
    let dev = Device::sim(SimConfig { threads, ..SimConfig::default().with_strategy(s).with_seed(11) });
    let counter = dev.alloc::<u32>(1).unwrap();
    let owner = dev.alloc::<u32>(40).unwrap();
    let k = tile_scheduler::kernel().unwrap();
    let args = [Arg::buffer(&counter), Arg::buffer(&owner), Arg::scalar(40u32)];
    let rep = dev.simulate(&k, LaunchConfig::linear(6, 32), &args).unwrap();
    (rep, dev.download(&counter).unwrap(), dev.download(&owner).unwrap())
}

/// What must not depend on the number of threads.
fn digest(rep: &SimReport) -> String {
    format!(
        "{}\n{:?} {:?}\n{}",
        rep.text(),
        rep.stats.thread_instructions,
        rep.stats.warp_instructions,
        rep.chrome_trace_json()
    )
}

#[test]
fn ctas_sharing_a_tile_counter_take_every_tile_once() {
    for s in [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial] {
        let (rep, counter, owner) = scheduler(1, s);
        assert!(rep.findings.is_empty(), "{}", rep.text());
        assert_eq!(counter, [40 + 6], "each CTA overshoots once");
        assert!(owner.iter().all(|&o| (1..=6).contains(&o)), "{s:?}: {owner:?}");
        let busy = (1..=6).filter(|c| owner.contains(c)).count();
        assert!(busy > 1, "{s:?}: the CTAs share the work: {owner:?}");
        for threads in [2, 3, 8] {
            let (rep2, counter2, owner2) = scheduler(threads, s);
            assert_eq!((counter2, owner2), (counter.clone(), owner.clone()), "{s:?}, {threads} threads");
            assert_eq!(digest(&rep2), digest(&rep), "{s:?}, {threads} threads");
        }
    }
}

#[test]
fn ctas_waiting_for_each_others_flags_finish_in_chain_order() {
    let k = flag_chain::kernel().unwrap();
    let mut first = None;
    for threads in [1, 2, 4] {
        let dev = Device::sim(SimConfig { threads, ..SimConfig::default() });
        let flags = dev.alloc::<u32>(8).unwrap();
        let order = dev.alloc::<u32>(9).unwrap();
        let rep = dev.simulate(&k, LaunchConfig::linear(8, 32), &[Arg::buffer(&flags), Arg::buffer(&order)]).unwrap();
        assert!(rep.findings.is_empty(), "{}", rep.text());
        let got = dev.download(&order).unwrap();
        assert_eq!(got, [8, 7, 6, 5, 4, 3, 2, 1, 0], "CTA i finishes after CTA i+1");
        let d = digest(&rep);
        assert_eq!(first.get_or_insert(d.clone()), &d, "{threads} threads");
    }
}

/// CTA 0 traps at once; every other CTA works a while, then writes its block index + 1.
#[phaser::kernel(target = "sm_90a")]
fn trap_in_first_cta(out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    let me = T.block_idx();
    if me == 0 {
        T.ptx.trap();
    }
    let mut h = tid;
    for i in 0..400 {
        h = h * 31 + i;
    }
    if tid == 0 {
        out[me] = me + 1 + (h & 0);
    }
}

#[test]
fn an_error_that_ends_the_launch_names_every_cta_it_cut_short() {
    // Two CTAs resident at a time: CTA 1 runs beside the trapping CTA 0, CTAs 2 and 3 wait.
    let dev = Device::sim(SimConfig { max_resident_ctas: 2, threads: 1, ..SimConfig::default() });
    let out = dev.alloc::<u32>(4).unwrap();
    let k = trap_in_first_cta::kernel().unwrap();
    let rep = dev.simulate(&k, LaunchConfig::linear(4, 32), &[Arg::buffer(&out)]).unwrap();
    assert!(rep.has(phaser::runtime::sim::Category::Trap), "{}", rep.text());
    assert_eq!(rep.cut_short.stopped, [[1, 0, 0]], "{}", rep.text());
    assert_eq!(rep.cut_short.not_started, [[2, 0, 0], [3, 0, 0]], "{}", rep.text());
    assert_eq!((rep.stats.ctas, rep.stats.clusters), (1, 1), "only CTA 0 ran to its end:\n{}", rep.text());
    let text = rep.text();
    assert!(text.contains("before 3 CTA(s) ran to their end"), "{text}");
    assert!(text.contains("stopped mid-run: [1, 0, 0]\n"), "{text}");
    assert!(text.contains("never started: [2, 0, 0], [3, 0, 0]\n"), "{text}");
    // The outputs they would have written are unwritten, as the report says.
    assert_eq!(dev.download(&out).unwrap(), [0, 0, 0, 0]);
}
