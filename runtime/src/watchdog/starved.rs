//! One entry of the watchdog's table: the lanes of one warp blocked at one wait, on one
//! barrier and parity, when the trap fired.

use phaser_codegen::emit::watchdog::{entry, kernel_tag, ENTRY_MAGIC, ENTRY_WORDS, NONE};
use phaser_codegen::ir::{Kernel, SourceLoc};

/// A starved wait as the recording lane saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StarvedWait {
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
    /// The parity of the barrier's current, incomplete phase when the lane recorded.
    pub phase_parity: u32,
    /// How many lanes of the warp this entry stands for (same wait, barrier and parity).
    pub lanes: u32,
    /// The barrier's 64-bit word as read by `ld.shared` (its layout is not documented).
    pub raw: u64,
    /// How long the recording lane had waited, from its wait's first watchdog check.
    pub elapsed_ns: u64,
    pub cta: [u32; 3],
    /// `%tid` of the recording (lowest) lane.
    pub thread: [u32; 3],
    pub smid: u32,
}

/// What one slot of the table holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    Wait(StarvedWait),
    /// No marker: the trap fired before the entry was complete.
    Incomplete,
    /// Written by another kernel of the same module.
    Foreign,
}

impl StarvedWait {
    /// Decode the entry `words` (`ENTRY_WORDS` long) against `kernel`.
    pub(crate) fn decode(kernel: &Kernel, words: &[u32]) -> Slot {
        assert_eq!(words.len(), ENTRY_WORDS, "one entry");
        if words[entry::MARKER] != ENTRY_MAGIC {
            return Slot::Incomplete;
        }
        if words[entry::KERNEL] != kernel_tag(kernel.name()) {
            return Slot::Foreign;
        }
        let pair = |w: usize| words[w] as u64 | (words[w + 1] as u64) << 32;
        let triple = |w: usize| [words[w], words[w + 1], words[w + 2]];
        let site = words[entry::SITE];
        let loc = kernel.wait_sites().get(site as usize).and_then(|s| s.loc);
        let barrier = match (words[entry::ALLOC], words[entry::INDEX]) {
            (NONE, _) | (_, NONE) => None,
            (alloc, index) => kernel.shared().get(alloc as usize).map(|a| (a.name.clone(), index)),
        };
        Slot::Wait(StarvedWait {
            site,
            loc,
            barrier,
            bar_addr: words[entry::BAR_ADDR],
            parity: (words[entry::PARITY] != NONE).then_some(words[entry::PARITY]),
            phase_parity: words[entry::PHASE_PARITY],
            lanes: words[entry::LANES].max(1),
            raw: pair(entry::RAW),
            elapsed_ns: pair(entry::ELAPSED_NS),
            cta: triple(entry::CTA),
            thread: triple(entry::THREAD),
            smid: words[entry::SMID],
        })
    }

    /// The barrier as the kernel names it: `full[2]`, or its shared address.
    pub fn barrier_name(&self) -> String {
        match &self.barrier {
            Some((name, i)) => format!("{name}[{i}]"),
            None => format!("the barrier at shared address {:#x}", self.bar_addr),
        }
    }

    /// Whether the awaited phase was still incomplete when the lane recorded (otherwise it
    /// completed after the lane's last try: the lane was not starved after all).
    pub fn still_blocked(&self) -> bool {
        self.parity.is_none_or(|p| p == self.phase_parity)
    }
}
