//! What a starved wait left behind: the watchdog record a kernel writes before it traps
//! (layout: `phaser_codegen::emit::watchdog`), decoded against the kernel it came from.

use phaser_codegen::emit::watchdog::{word, NONE, RECORD_MAGIC, RECORD_WORDS};
pub use phaser_codegen::ir::Watchdog;
use phaser_codegen::ir::{Kernel, SourceLoc};
use std::fmt;

/// The wait that starved, as the first thread to time out saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchdogRecord {
    pub kernel: String,
    /// The wait's index in `Kernel::wait_sites()`.
    pub site: u32,
    /// The Rust line of the wait.
    pub loc: Option<SourceLoc>,
    /// The barrier array and the barrier's index in it (`full`, 2); `None` when the address
    /// is not in a barrier array (a barrier placed in a data array).
    pub barrier: Option<(String, u32)>,
    /// The barrier's shared address.
    pub bar_addr: u32,
    /// The parity waited for (`None`: a wait on a state token).
    pub parity: Option<u32>,
    /// The parity of the barrier's current, incomplete phase when the thread gave up.
    pub phase_parity: u32,
    /// The barrier's 64-bit word as read by `ld.shared` (its layout is not documented).
    pub raw: u64,
    /// How long the thread had waited.
    pub elapsed_ns: u64,
    pub cta: [u32; 3],
    pub thread: [u32; 3],
    pub smid: u32,
}

impl WatchdogRecord {
    /// Decode `words` (a record buffer after a launch) against `kernel`; `None` when no
    /// complete record is there (the magic word is written last).
    pub fn decode(kernel: &Kernel, words: &[u32; RECORD_WORDS]) -> Option<WatchdogRecord> {
        if words[word::MAGIC] != RECORD_MAGIC {
            return None;
        }
        let pair = |w: usize| words[w] as u64 | (words[w + 1] as u64) << 32;
        let triple = |w: usize| [words[w], words[w + 1], words[w + 2]];
        let site = words[word::SITE];
        let loc = kernel.wait_sites().get(site as usize).and_then(|s| s.loc);
        let barrier = match (words[word::ALLOC], words[word::INDEX]) {
            (NONE, _) | (_, NONE) => None,
            (alloc, index) => kernel.shared().get(alloc as usize).map(|a| (a.name.clone(), index)),
        };
        Some(WatchdogRecord {
            kernel: kernel.name().to_owned(),
            site,
            loc,
            barrier,
            bar_addr: words[word::BAR_ADDR],
            parity: (words[word::PARITY] != NONE).then_some(words[word::PARITY]),
            phase_parity: words[word::PHASE_PARITY],
            raw: pair(word::RAW),
            elapsed_ns: pair(word::ELAPSED_NS),
            cta: triple(word::CTA),
            thread: triple(word::THREAD),
            smid: words[word::SMID],
        })
    }

    /// The barrier as the kernel names it: `full[2]`, or its shared address.
    pub fn barrier_name(&self) -> String {
        match &self.barrier {
            Some((name, i)) => format!("{name}[{i}]"),
            None => format!("the barrier at shared address {:#x}", self.bar_addr),
        }
    }
}

impl fmt::Display for WatchdogRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.loc.map(|l| format!(" at {l}")).unwrap_or_default();
        write!(f, "the wait{at} (wait site {}) on `{}` ", self.site, self.barrier_name())?;
        match self.parity {
            Some(p) => {
                write!(
                    f,
                    "for the phase of parity {p} never saw it complete: the barrier's current phase has parity {}",
                    self.phase_parity
                )?;
                if p != self.phase_parity {
                    // The awaited phase completed in the meantime, after the last try.
                    write!(f, " (it completed after the last try)")?;
                }
            }
            None => {
                write!(f, "on a state token never saw its phase complete (current phase parity {})", self.phase_parity)?
            }
        }
        let [cx, cy, cz] = self.cta;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            "; thread ({tx},{ty},{tz}) of CTA ({cx},{cy},{cz}) on SM {} gave up after {:.2} s (raw mbarrier word {:#018x})",
            self.smid,
            self.elapsed_ns as f64 / 1e9,
            self.raw
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::KernelBuilder;
    use phaser_codegen::ir::Value;
    use phaser_codegen::Target;

    /// Two barrier arrays and two waits: the record names the second array's barrier 1.
    fn kernel() -> (Kernel, u32) {
        let mut k = KernelBuilder::new("two_arrays", Target::Sm90a);
        let full = k.alloc_barriers("full", 4);
        let empty = k.alloc_barriers("empty", 4);
        let f0 = k.barrier_at(full, Value::u32(0));
        let e1 = k.barrier_at(empty, Value::u32(1));
        k.mbarrier_init(f0, Value::u32(1));
        k.mbarrier_wait(f0, Value::u32(0));
        let line = line!() + 1;
        k.mbarrier_wait(e1, Value::u32(1));
        (k.finish().unwrap(), line)
    }

    fn words(k: &Kernel, site: u32, alloc: u32, index: u32, parity: u32, phase: u32) -> [u32; RECORD_WORDS] {
        let _ = k;
        let mut w = [0u32; RECORD_WORDS];
        w[word::MAGIC] = RECORD_MAGIC;
        w[word::SITE] = site;
        w[word::ALLOC] = alloc;
        w[word::INDEX] = index;
        w[word::PARITY] = parity;
        w[word::PHASE_PARITY] = phase;
        w[word::BAR_ADDR] = 0x418;
        w[word::RAW] = 0xdead;
        w[word::RAW + 1] = 0x1;
        w[word::ELAPSED_NS] = 4_000_100_000u64 as u32;
        w[word::ELAPSED_NS + 1] = (4_000_100_000u64 >> 32) as u32;
        w[word::CTA..word::CTA + 3].copy_from_slice(&[5, 0, 0]);
        w[word::THREAD..word::THREAD + 3].copy_from_slice(&[33, 0, 0]);
        w[word::SMID] = 17;
        w
    }

    #[test]
    fn a_record_names_barrier_parity_phase_thread_and_line() {
        let (k, line) = kernel();
        let sites = k.wait_sites();
        assert_eq!(sites.len(), 2);
        assert_eq!(sites[1].loc.unwrap().line, line);
        assert_eq!(sites[1].parity.as_deref(), Some("1"));
        let empty = k.shared().iter().position(|a| a.name == "empty").unwrap() as u32;
        let r = WatchdogRecord::decode(&k, &words(&k, 1, empty, 1, 1, 1)).expect("a complete record");
        assert_eq!(r.barrier, Some(("empty".to_string(), 1)));
        assert_eq!((r.parity, r.phase_parity, r.cta, r.thread), (Some(1), 1, [5, 0, 0], [33, 0, 0]));
        assert_eq!(r.raw, 0x1_0000_dead);
        assert_eq!(r.elapsed_ns, 4_000_100_000);
        let text = r.to_string();
        let at = format!("at {}:{line}:", file!());
        assert!(text.contains(&at), "{text}");
        assert!(text.contains("on `empty[1]` for the phase of parity 1 never saw it complete: the barrier's current phase has parity 1;"), "{text}");
        assert!(text.contains("thread (33,0,0) of CTA (5,0,0) on SM 17 gave up after 4.00 s"), "{text}");
    }

    #[test]
    fn incomplete_or_foreign_records() {
        let (k, _) = kernel();
        let mut w = words(&k, 0, 0, 2, 0, 0);
        w[word::MAGIC] = 0;
        assert_eq!(WatchdogRecord::decode(&k, &w), None, "no magic word: the record was not finished");
        let r = WatchdogRecord::decode(&k, &words(&k, 0, NONE, NONE, NONE, 1)).unwrap();
        assert_eq!(r.barrier, None);
        assert_eq!(r.parity, None);
        let text = r.to_string();
        assert!(text.contains("`the barrier at shared address 0x418` on a state token"), "{text}");
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
