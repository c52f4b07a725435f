//! The watchdog's record decoded: the header the finalizer wrote (how many waits starved,
//! the launch's shape), every starved wait of the table, grouped by barrier and parity, the
//! likely root, and how to replay the launch in the simulator.

use super::root::{data_barrier_arrays, likely_root, LikelyRoot};
use super::starved::{Slot, StarvedWait};
use phaser_codegen::emit::watchdog::{
    header, kernel_tag, ENTRY_CAPACITY, ENTRY_WORDS, HEADER_WORDS, RECORD_MAGIC, RECORD_WORDS,
};
use phaser_codegen::ir::Kernel;
use std::fmt;

/// The launch the finalizer was part of, as its special registers gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

/// The starved waits on one barrier for one parity (across warps, CTAs and wait sites).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitGroup {
    /// `full[2]`, the barrier's address, or a flag wait's flag (`flags[3]`).
    pub barrier: String,
    /// The barrier array's name, when the address is in one.
    pub array: Option<String>,
    pub parity: Option<u32>,
    /// A flag wait's value waited for and the value its first entry's last try read (then
    /// `barrier` names the flag and the parities do not apply).
    pub flag: Option<(u32, u32)>,
    /// The barrier's current phase parity (as the group's first entry saw it).
    pub phase_parity: u32,
    /// Whether the awaited phase was still incomplete (false: it completed after the tries).
    pub still_blocked: bool,
    pub threads: u32,
    pub warps: u32,
    pub ctas: u32,
    /// Indices into `WatchdogReport::waits`, first recorded first.
    pub waits: Vec<usize>,
}

/// Everything the watchdog's record says about a trapped launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchdogReport {
    pub kernel: String,
    /// The starved waits recorded, in the order they took their slots (the first one timed
    /// out; the others recorded on the alarm or their own timeout).
    pub waits: Vec<StarvedWait>,
    /// Slots taken when the finalizer's grace period ended; `None` when the trap came before
    /// the header was complete (only the entries are known).
    pub claimed: Option<u32>,
    /// Slots taken past the table's end: starved waits counted but not recorded.
    pub dropped: u32,
    /// Slots whose entries the trap cut off (taken, never completed).
    pub incomplete: u32,
    /// The finalizer's grace period.
    pub grace_ns: Option<u64>,
    pub shape: Option<LaunchShape>,
    /// By barrier and parity, the first recorded first.
    pub groups: Vec<WaitGroup>,
    pub root: Option<LikelyRoot>,
}

impl WatchdogReport {
    /// Decode `words` (the record buffer after a launch) against `kernel`; `None` when the
    /// record holds nothing of this kernel's (no header of its, no complete entry).
    pub fn decode(kernel: &Kernel, words: &[u32]) -> Option<WatchdogReport> {
        if words.len() < RECORD_WORDS {
            return None;
        }
        let tag = kernel_tag(kernel.name());
        let finished = words[header::MAGIC] == RECORD_MAGIC && words[header::KERNEL] == tag;
        let claimed = finished.then_some(words[header::CLAIMED]);
        // Without the header, look at every slot: an unwritten one reads as incomplete.
        let slots = claimed.map_or(ENTRY_CAPACITY, |c| (c as usize).min(ENTRY_CAPACITY));
        let (mut waits, mut incomplete) = (Vec::new(), 0);
        for s in 0..slots {
            let at = HEADER_WORDS + s * ENTRY_WORDS;
            match StarvedWait::decode(kernel, &words[at..at + ENTRY_WORDS]) {
                Slot::Wait(w) => waits.push(w),
                Slot::Incomplete if claimed.is_some() => incomplete += 1,
                Slot::Incomplete | Slot::Foreign => {}
            }
        }
        if waits.is_empty() && !finished {
            return None;
        }
        let triple = |w: usize| [words[w], words[w + 1], words[w + 2]];
        let shape = finished.then(|| LaunchShape {
            grid: triple(header::GRID),
            block: triple(header::BLOCK),
            dynamic_shared_bytes: words[header::DYNAMIC_SHARED],
        });
        let grace_ns = finished.then(|| words[header::GRACE_NS] as u64 | (words[header::GRACE_NS + 1] as u64) << 32);
        let groups = group(&waits);
        let root = likely_root(&groups, &data_barrier_arrays(kernel));
        Some(WatchdogReport {
            kernel: kernel.name().to_owned(),
            dropped: claimed.map_or(0, |c| c.saturating_sub(ENTRY_CAPACITY as u32)),
            claimed,
            incomplete,
            grace_ns,
            shape,
            waits,
            groups,
            root,
        })
    }

    /// The barriers of the likely root (`empty[0]`), in order, without repeats.
    pub fn root_barriers(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for &g in self.root.iter().flat_map(|r| &r.groups) {
            if !v.contains(&self.groups[g].barrier.as_str()) {
                v.push(&self.groups[g].barrier);
            }
        }
        v
    }
}

/// The waits grouped by barrier and parity, in order of first appearance.
fn group(waits: &[StarvedWait]) -> Vec<WaitGroup> {
    let mut groups: Vec<WaitGroup> = Vec::new();
    let mut ctas: Vec<Vec<[u32; 3]>> = Vec::new();
    for (i, w) in waits.iter().enumerate() {
        let name = w.barrier_name();
        let flag = w.flag.as_ref().map(|f| (f.expected, f.seen));
        let same = |g: &WaitGroup| g.flag.map(|f| f.0) == flag.map(|f| f.0);
        let g = match groups.iter().position(|g| g.barrier == name && g.parity == w.parity && same(g)) {
            Some(g) => g,
            None => {
                groups.push(WaitGroup {
                    barrier: name,
                    array: w.barrier.as_ref().map(|b| b.0.clone()),
                    parity: w.parity,
                    flag,
                    phase_parity: w.phase_parity,
                    still_blocked: false,
                    threads: 0,
                    warps: 0,
                    ctas: 0,
                    waits: Vec::new(),
                });
                ctas.push(Vec::new());
                groups.len() - 1
            }
        };
        let grp = &mut groups[g];
        grp.still_blocked |= w.still_blocked();
        grp.threads += w.lanes;
        grp.warps += 1;
        grp.waits.push(i);
        if !ctas[g].contains(&w.cta) {
            ctas[g].push(w.cta);
            grp.ctas += 1;
        }
    }
    groups
}

fn plural(n: u32, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn triple([x, y, z]: [u32; 3]) -> String {
    format!("({x},{y},{z})")
}

impl fmt::Display for StarvedWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.loc.map(|l| format!("at {l} ")).unwrap_or_default();
        let raw = match &self.flag {
            Some(_) => format!(" (flag buffer at {:#x})", self.raw),
            None => format!(" (raw mbarrier word {:#018x})", self.raw),
        };
        write!(
            f,
            "{at}(wait site {}): thread {} of CTA {} on SM {}{} gave up after {:.2} s{raw}",
            self.site,
            triple(self.thread),
            triple(self.cta),
            self.smid,
            if self.lanes > 1 { format!(" (and {} more lanes of its warp)", self.lanes - 1) } else { String::new() },
            self.elapsed_ns as f64 / 1e9,
        )
    }
}

impl fmt::Display for WatchdogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let threads: u32 = self.groups.iter().map(|g| g.threads).sum();
        write!(
            f,
            "{} recorded when the trap fired ({} in {})",
            plural(self.waits.len() as u32, "starved wait"),
            plural(threads, "thread"),
            plural(self.groups.len() as u32, "group")
        )?;
        if self.dropped > 0 {
            write!(
                f,
                "; {} not recorded (the table holds {ENTRY_CAPACITY})",
                plural(self.dropped, "more starved warp")
            )?;
        }
        if self.incomplete > 0 {
            write!(f, "; {} cut off by the trap", plural(self.incomplete, "entry"))?;
        }
        if self.claimed.is_none() {
            write!(f, "; the trap came before the record's header was written (counts may be short)")?;
        }
        writeln!(f, ":")?;
        for (gi, g) in self.groups.iter().enumerate() {
            let mark = if self.root.as_ref().is_some_and(|r| r.groups.contains(&gi)) { "*" } else { "-" };
            let (on, what, state) = match (g.flag, g.parity) {
                (Some((expected, seen)), _) => (
                    format!("the flag `{}`", g.barrier),
                    format!("(`flag.wait` for {expected})"),
                    format!("never saw it reached: the last try read {seen}"),
                ),
                (None, parity) => (
                    format!("`{}`", g.barrier),
                    match parity {
                        Some(p) => format!("for the phase of parity {p}"),
                        None => "on a state token".into(),
                    },
                    if g.still_blocked {
                        format!("never saw it complete: the barrier's current phase has parity {}", g.phase_parity)
                    } else {
                        format!("saw it complete only after the last try (current phase parity {})", g.phase_parity)
                    },
                ),
            };
            writeln!(
                f,
                "  {mark} on {on} {what} {state}; {} in {} of {}",
                plural(g.threads, "thread"),
                plural(g.warps, "warp"),
                plural(g.ctas, "CTA")
            )?;
            const SHOWN: usize = 3;
            for &w in g.waits.iter().take(SHOWN) {
                writeln!(f, "      {}", self.waits[w])?;
            }
            if g.waits.len() > SHOWN {
                writeln!(f, "      ... and {}", plural((g.waits.len() - SHOWN) as u32, "more warp"))?;
            }
        }
        match &self.root {
            Some(r) => {
                let roots: Vec<String> = self.root_barriers().iter().map(|b| format!("`{b}`")).collect();
                writeln!(f, "likely root (*): the waits on {}: {}", roots.join(", "), r.why)?
            }
            None => writeln!(
                f,
                "likely root: not one the GPU's record can name (waits on several barriers, past their first phase)"
            )?,
        }
        if let Some(g) = self.grace_ns {
            writeln!(
                f,
                "(waits that began blocking more than {:.2} s after the first starved one are not listed)",
                g as f64 / 1e9
            )?;
        }
        write!(f, "the simulator names the cause: replay the same launch with `Device::sim(SimConfig::default())`")?;
        if let Some(s) = self.shape {
            write!(
                f,
                " and `LaunchConfig {{ grid: {:?}, block: {:?}, dynamic_shared_bytes: {}, .. }}`",
                s.grid, s.block, s.dynamic_shared_bytes
            )?;
        }
        write!(
            f,
            " and the same arguments, or, for a registered example, `phaser check --only {} --exact`",
            self.kernel
        )
    }
}
