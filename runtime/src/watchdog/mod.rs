//! What starved waits left behind: the watchdog record a kernel writes before it traps
//! (layout and protocol: `phaser_codegen::emit::watchdog`), decoded against the kernel it
//! came from into a report that groups the starved waits by barrier and parity and names the
//! likely root.
//!
//! - `starved.rs`: one entry of the table (a warp's lanes at one wait).
//! - `report.rs`: the whole record: header, entries, counts, grouping, the text.
//! - `root.rs`: which group is the likely cause, and which barriers carry data.

mod report;
mod root;
mod starved;

pub use phaser_codegen::ir::Watchdog;
pub use report::{LaunchShape, WaitGroup, WatchdogReport};
pub use root::LikelyRoot;
pub use starved::StarvedWait;

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::KernelBuilder;
    use phaser_codegen::emit::watchdog::{
        entry, header, kernel_tag, ENTRY_CAPACITY, ENTRY_MAGIC, ENTRY_WORDS, HEADER_WORDS, NONE, RECORD_MAGIC,
        RECORD_WORDS,
    };
    use phaser_codegen::ir::{Kernel, Value};
    use phaser_codegen::{Target, Type};

    /// A pipeline's barriers: bytes land on `full` (expect_tx and a bulk copy), `empty` only
    /// gets arrivals. Waits: the producer on `empty[0]` (site 0), the consumers on `full[0]` (site 1).
    fn pipeline() -> (Kernel, u32) {
        let mut k = KernelBuilder::new("pipe", Target::Sm90a);
        let src = k.param_global("src", Type::F32, false);
        let full = k.alloc_barriers("full", 2);
        let empty = k.alloc_barriers("empty", 2);
        let data = k.alloc_shared("data", Type::F32, 64);
        let f = k.barrier_at(full, Value::u32(0));
        let e = k.barrier_at(empty, Value::u32(0));
        k.mbarrier_init(f, Value::u32(1));
        k.mbarrier_init(e, Value::u32(1));
        let line = line!() + 1;
        k.mbarrier_wait(e, Value::u32(0));
        k.mbarrier_arrive_expect_tx(f, Value::u32(256));
        let dst = k.shared_elem_addr(data, Value::u32(0));
        let from = k.global_elem_addr(src, Value::u32(0));
        k.bulk_load(dst, from, Value::u32(256), f);
        k.mbarrier_wait(f, Value::u32(0));
        k.mbarrier_arrive(e);
        (k.finish().unwrap(), line)
    }

    fn alloc(k: &Kernel, name: &str) -> u32 {
        k.shared().iter().position(|a| a.name == name).unwrap() as u32
    }

    /// One entry: site, barrier array and index, parity, phase parity, lanes, CTA x, thread x.
    #[allow(clippy::too_many_arguments)]
    fn put(
        w: &mut [u32],
        k: &Kernel,
        slot: usize,
        site: u32,
        arr: u32,
        idx: u32,
        par: u32,
        phase: u32,
        lanes: u32,
        cta: u32,
        tid: u32,
    ) {
        let e = &mut w[HEADER_WORDS + slot * ENTRY_WORDS..][..ENTRY_WORDS];
        e[entry::MARKER] = ENTRY_MAGIC;
        e[entry::KERNEL] = kernel_tag(k.name());
        e[entry::SITE] = site;
        e[entry::ALLOC] = arr;
        e[entry::INDEX] = idx;
        e[entry::PARITY] = par;
        e[entry::PHASE_PARITY] = phase;
        e[entry::BAR_ADDR] = 0x400u32.wrapping_add(8u32.wrapping_mul(idx));
        e[entry::SMID] = 7;
        e[entry::LANES] = lanes;
        e[entry::ELAPSED_NS] = 300_000_000;
        e[entry::CTA] = cta;
        e[entry::THREAD] = tid;
        e[entry::RAW] = 0xbeef;
    }

    fn finish(w: &mut [u32], k: &Kernel, claimed: u32) {
        w[header::MAGIC] = RECORD_MAGIC;
        w[header::CLAIMED] = claimed;
        w[header::KERNEL] = kernel_tag(k.name());
        w[header::GRACE_NS] = 50_000_000;
        w[header::GRID..header::GRID + 3].copy_from_slice(&[2, 1, 1]);
        w[header::BLOCK..header::BLOCK + 3].copy_from_slice(&[128, 1, 1]);
        w[header::DYNAMIC_SHARED] = 1024;
    }

    #[test]
    fn only_full_carries_data() {
        let (k, _) = pipeline();
        assert_eq!(root::data_barrier_arrays(&k).into_iter().collect::<Vec<_>>(), ["full"]);
    }

    /// The wrong start parity seen from the GPU: the producer of each CTA on `empty[0]`, the
    /// consumers on `full[0]` (three warps per CTA, one with a lane that was not starved);
    /// the groups count them and the root is `empty[0]`.
    #[test]
    fn a_start_parity_cycle_groups_the_waits_and_names_the_release_barrier() {
        let (k, line) = pipeline();
        let (full, empty) = (alloc(&k, "full"), alloc(&k, "empty"));
        let mut w = vec![0u32; RECORD_WORDS];
        put(&mut w, &k, 0, 1, full, 0, 0, 0, 32, 0, 32);
        put(&mut w, &k, 1, 0, empty, 0, 0, 0, 1, 0, 0);
        put(&mut w, &k, 2, 1, full, 0, 0, 0, 32, 1, 64);
        put(&mut w, &k, 3, 0, empty, 0, 0, 0, 1, 1, 0);
        put(&mut w, &k, 4, 1, full, 0, 0, 0, 31, 0, 65);
        finish(&mut w, &k, 5);
        let r = WatchdogReport::decode(&k, &w).expect("a record");
        assert_eq!((r.waits.len(), r.claimed, r.dropped, r.incomplete), (5, Some(5), 0, 0));
        let g: Vec<(&str, u32, u32, u32)> =
            r.groups.iter().map(|g| (g.barrier.as_str(), g.threads, g.warps, g.ctas)).collect();
        assert_eq!(g, [("full[0]", 95, 3, 2), ("empty[0]", 2, 2, 2)]);
        assert_eq!(r.root_barriers(), ["empty[0]"]);
        assert_eq!(r.shape, Some(LaunchShape { grid: [2, 1, 1], block: [128, 1, 1], dynamic_shared_bytes: 1024 }));
        let text = r.to_string();
        for want in [
            "5 starved waits recorded when the trap fired (97 threads in 2 groups):",
            "  - on `full[0]` for the phase of parity 0 never saw it complete: the barrier's current phase has parity 0; 95 threads in 3 warps of 2 CTAs",
            "  * on `empty[0]` for the phase of parity 0 never saw it complete: the barrier's current phase has parity 0; 2 threads in 2 warps of 2 CTAs",
            &format!("      at {}:{line}:", file!()),
            "(wait site 0): thread (0,0,0) of CTA (1,0,0) on SM 7 gave up after 0.30 s",
            "(wait site 1): thread (32,0,0) of CTA (0,0,0) on SM 7 (and 31 more lanes of its warp) gave up",
            "likely root (*): the waits on `empty[0]`: a circular wait at the first phase",
            "producers on `empty` start at phase 1); the waits on `full[0]` are symptoms",
            "replay the same launch with `Device::sim(SimConfig::default())` and `LaunchConfig { grid: [2, 1, 1], block: [128, 1, 1], dynamic_shared_bytes: 1024, .. }`",
            "`phaser check --only pipe --exact`",
        ] {
            assert!(text.contains(want), "expected {want:?} in:\n{text}");
        }
    }

    /// A full table: the slots past it are counted as dropped; an entry the trap cut off is
    /// counted, not decoded; one barrier starved: it is the root.
    #[test]
    fn a_full_table_counts_what_it_dropped() {
        let (k, _) = pipeline();
        let full = alloc(&k, "full");
        let mut w = vec![0u32; RECORD_WORDS];
        for s in 0..ENTRY_CAPACITY {
            put(&mut w, &k, s, 1, full, 0, 0, 0, 32, s as u32, 0);
        }
        w[HEADER_WORDS + 9 * ENTRY_WORDS + entry::MARKER] = 0;
        finish(&mut w, &k, ENTRY_CAPACITY as u32 + 40);
        let r = WatchdogReport::decode(&k, &w).unwrap();
        assert_eq!((r.waits.len(), r.dropped, r.incomplete), (ENTRY_CAPACITY - 1, 40, 1));
        assert_eq!(r.groups.len(), 1);
        assert_eq!(r.groups[0].ctas as usize, ENTRY_CAPACITY - 1);
        assert_eq!(r.root_barriers(), ["full[0]"]);
        let text = r.to_string();
        assert!(
            text.contains("; 40 more starved warps not recorded (the table holds 512); 1 entry cut off by the trap:"),
            "{text}"
        );
        assert!(text.contains("... and 508 more warps"), "{text}");
        assert!(text.contains("every starved wait is on `full[0]`"), "{text}");
    }

    /// No header (the trap came first), another kernel's entries, an empty record, a wait
    /// whose phase completed after its last try, and an address outside every barrier array.
    #[test]
    fn partial_foreign_and_empty_records() {
        let (k, _) = pipeline();
        let (full, empty) = (alloc(&k, "full"), alloc(&k, "empty"));
        let mut w = vec![0u32; RECORD_WORDS];
        assert_eq!(WatchdogReport::decode(&k, &w), None, "nothing recorded");
        assert_eq!(WatchdogReport::decode(&k, &w[..10]), None, "too short");
        put(&mut w, &k, 0, 1, full, 0, 0, 0, 1, 0, 0);
        w[HEADER_WORDS + entry::KERNEL] ^= 1;
        assert_eq!(WatchdogReport::decode(&k, &w), None, "another kernel's entry");
        put(&mut w, &k, 0, 1, full, 1, 1, 0, 1, 0, 0); // parity 1 but the phase is 0: released
        put(&mut w, &k, 1, 0, empty, 1, 0, 0, 1, 0, 0);
        put(&mut w, &k, 2, 0, NONE, NONE, NONE, 0, 1, 0, 5);
        let r = WatchdogReport::decode(&k, &w).unwrap();
        assert_eq!((r.claimed, r.shape, r.waits.len()), (None, None, 3));
        assert!(!r.groups[0].still_blocked && r.groups[1].still_blocked);
        let text = r.to_string();
        assert!(text.contains("the trap came before the record's header was written"), "{text}");
        assert!(
            text.contains("on `full[1]` for the phase of parity 1 saw it complete only after the last try"),
            "{text}"
        );
        assert!(
            text.contains("on `the barrier at shared address 0x3f8` on a state token never saw it complete"),
            "{text}"
        );
        assert!(text.contains("likely root: not one the GPU's record can name"), "{text}");
        assert!(!text.contains("LaunchConfig {"), "no shape without the header: {text}");
    }

    /// A flag nobody signals: site 0 is the barrier wait, site 1 the flag wait on `flags[3]`
    /// for 2 (two warps, one CTA each, read 1), beside a warp starved on the barrier.
    #[test]
    fn a_starved_flag_wait_is_named_grouped_and_the_root() {
        let mut b = KernelBuilder::new("flagged", Target::Sm90a);
        let flags = b.param_global("flags", Type::U32, true);
        let bars = b.alloc_barriers("full", 1);
        let bar = b.barrier_at(bars, Value::u32(0));
        b.mbarrier_init(bar, Value::u32(1));
        b.mbarrier_wait(bar, Value::u32(0));
        let line = line!() + 1;
        b.flag_wait(flags, Value::u32(3), Value::u32(2), phaser_codegen::ir::MemScope::Gpu);
        let k = b.finish().unwrap();
        let mut w = vec![0u32; RECORD_WORDS];
        put(&mut w, &k, 0, 0, alloc(&k, "full"), 0, 0, 0, 32, 0, 0);
        for (slot, cta) in [(1, 0), (2, 1)] {
            put(&mut w, &k, slot, 1, NONE, NONE, NONE, NONE, 32, cta, 32);
            let e = &mut w[HEADER_WORDS + slot * ENTRY_WORDS..][..ENTRY_WORDS];
            (e[entry::FLAG_INDEX], e[entry::FLAG_EXPECTED], e[entry::FLAG_SEEN]) = (3, 2, 1);
            (e[entry::RAW], e[entry::RAW + 1]) = (0x1000, 0x7f);
        }
        finish(&mut w, &k, 3);
        let r = WatchdogReport::decode(&k, &w).expect("a record");
        let f = r.waits[1].flag.as_ref().expect("site 1 is the flag wait");
        assert_eq!((f.buffer.as_ref().map(|b| b.name.as_str()), f.index, f.expected, f.seen), (Some("flags"), 3, 2, 1));
        assert_eq!(r.waits[0].flag, None);
        let g: Vec<_> = r.groups.iter().map(|g| (g.barrier.as_str(), g.flag, g.warps, g.ctas)).collect();
        assert_eq!(g, [("full[0]", None, 1, 1), ("flags[3]", Some((2, 1)), 2, 2)]);
        assert_eq!(r.root_barriers(), ["flags[3]"]);
        let text = r.to_string();
        for want in [
            "  * on the flag `flags[3]` (`flag.wait` for 2) never saw it reached: the last try read 1; 64 threads in 2 warps of 2 CTAs",
            &format!("      at {}:{line}:", file!()),
            "(wait site 1): thread (32,0,0) of CTA (1,0,0) on SM 7 (and 31 more lanes of its warp) gave up after 0.30 s (flag buffer at 0x7f00001000)",
            "likely root (*): the waits on `flags[3]`: a flag that is never signalled",
            "  - on `full[0]` for the phase of parity 0 never saw it complete",
            "replay the same launch with `Device::sim(SimConfig::default())` and `LaunchConfig { grid: [2, 1, 1], block: [128, 1, 1], dynamic_shared_bytes: 1024, .. }`",
            "`phaser check --only flagged --exact`",
        ] {
            assert!(text.contains(want), "expected {want:?} in:\n{text}");
        }
    }

    #[test]
    fn watchdog_settings_parse_and_print() {
        assert_eq!(Watchdog::parse("off"), Ok(Watchdog::Off));
        assert_eq!(Watchdog::parse("0"), Ok(Watchdog::Off));
        assert_eq!(Watchdog::parse("250ms"), Ok(Watchdog::AfterNs(250_000_000)));
        assert_eq!(Watchdog::parse("4s"), Ok(Watchdog::DEFAULT));
        assert_eq!(Watchdog::parse("1500us").unwrap().to_string(), "1500us");
        assert!(Watchdog::parse("4 parsecs").unwrap_err().contains("unknown unit `parsecs`"));
        assert!(Watchdog::parse("ms").unwrap_err().contains("expected `off` or a number"));
        // A zero duration is refused, not read as `off`.
        for zero in ["0ms", "0s", "00ns"] {
            assert_eq!(
                Watchdog::parse(zero),
                Err(format!("watchdog `{zero}` is zero; write `off` (or `0`) to wait forever")),
            );
        }
        assert_eq!(Watchdog::DEFAULT.to_string(), "4s");
    }
}
