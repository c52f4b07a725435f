//! One entry of the watchdog's table: the lanes of one warp blocked at one wait, on one
//! barrier and parity, when the trap fired.

use phaser_codegen::emit::watchdog::{entry, kernel_tag, FlagBuffer, WaitKind, ENTRY_MAGIC, ENTRY_WORDS, NONE};
use phaser_codegen::ir::{flag_name, Kernel, SourceLoc};

/// What a starved flag wait (`T.flag.wait`) saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StarvedFlag {
    /// The buffer parameter holding the flag (`None`: a pointer computed from one).
    pub buffer: Option<FlagBuffer>,
    /// The flag's element index in the buffer.
    pub index: u32,
    /// The value waited for.
    pub expected: u32,
    /// The value the last try read.
    pub seen: u32,
}

impl StarvedFlag {
    /// `flags[3]`, as the simulator's report names it (`ir::flag_name`).
    pub fn name(&self) -> String {
        match &self.buffer {
            Some(b) => flag_name(&b.name, self.index as u64),
            None => flag_name("(a flag pointer computed from a buffer)", self.index as u64),
        }
    }
}

/// A starved wait as the recording lane saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StarvedWait {
    /// The wait's index in `Kernel::wait_sites()`.
    pub site: u32,
    /// The Rust line of the wait.
    pub loc: Option<SourceLoc>,
    /// The barrier array and the barrier's index in it (`full`, 2); `None` when the address
    /// is not in a barrier array (a barrier placed in a data array), and for a flag wait.
    pub barrier: Option<(String, u32)>,
    /// A flag wait's flag (then the barrier's fields do not apply).
    pub flag: Option<StarvedFlag>,
    /// The barrier's shared address.
    pub bar_addr: u32,
    /// The parity waited for (`None`: a wait on a state token).
    pub parity: Option<u32>,
    /// The parity of the barrier's current, incomplete phase when the lane recorded.
    pub phase_parity: u32,
    /// How many lanes of the warp this entry stands for (same wait, barrier and parity).
    pub lanes: u32,
    /// The barrier's 64-bit word as read by `ld.shared` (its layout is not documented); a
    /// flag wait's: the flag buffer's device address.
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
        let sites = kernel.wait_sites();
        let loc = sites.get(site as usize).and_then(|s| s.loc);
        let flag = match sites.get(site as usize).map(|s| &s.kind) {
            Some(WaitKind::Flag { buffer }) => Some(StarvedFlag {
                buffer: buffer.clone(),
                index: words[entry::FLAG_INDEX],
                expected: words[entry::FLAG_EXPECTED],
                seen: words[entry::FLAG_SEEN],
            }),
            Some(WaitKind::Barrier { .. }) | None => None,
        };
        let barrier = match (words[entry::ALLOC], words[entry::INDEX]) {
            (NONE, _) | (_, NONE) => None,
            (alloc, index) => kernel.shared().get(alloc as usize).map(|a| (a.name.clone(), index)),
        };
        Slot::Wait(StarvedWait {
            site,
            loc,
            barrier,
            flag,
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

    /// What the wait is on as the kernel names it: `full[2]`, the barrier's shared address, or
    /// the flag.
    pub fn barrier_name(&self) -> String {
        match (&self.flag, &self.barrier) {
            (Some(f), _) => f.name(),
            (None, Some((name, i))) => format!("{name}[{i}]"),
            (None, None) => format!("the barrier at shared address {:#x}", self.bar_addr),
        }
    }

    /// Whether the awaited phase was still incomplete when the lane recorded (otherwise it
    /// completed after the lane's last try: the lane was not starved after all); a flag wait
    /// records a failed try, below its value.
    pub fn still_blocked(&self) -> bool {
        match &self.flag {
            Some(f) => f.seen < f.expected,
            None => self.parity.is_none_or(|p| p == self.phase_parity),
        }
    }
}
