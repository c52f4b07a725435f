//! The wait watchdog's trap path and its record: when a blocking wait starves, every starved
//! wait of the grid is written into a table in a buffer the runtime reads after the fault
//! (mapped, pinned host memory: it survives the sticky error that poisons the context), then
//! one thread traps.
//!
//! The record's layout is defined here, once ([`header`], [`entry`]); the runtime decodes it
//! with these constants. The kernel finds the record through a module global
//! ([`RECORD_SYMBOL`], 0 when nobody set it: then the thread just traps).
//!
//! Why the protocol is what it is (`trap` ends every thread of the context at once, so
//! whatever is to be reported must be out before it):
//! - **Slots.** A starved wait takes a table slot with `atom.add` on a counter in *device*
//!   memory ([`CLAIM_SYMBOL`]), not in the mapped record: atomics on mapped host memory are
//!   not atomic over PCIe on every system, device-memory atomics always are. The host cannot
//!   read device memory after the fault, so the counter reaches the record through the first
//!   waiter (below). Slots past [`ENTRY_CAPACITY`] are counted, not written.
//! - **One entry per warp and wait.** The lanes of a warp at the same wait on the same barrier
//!   and parity, or the same flag and value (`match.any.sync`), write one entry, by their
//!   lowest lane, with their count: a deadlocked GEMM has tens of thousands of starved threads
//!   but about a thousand warps.
//! - **Two kinds of wait.** A blocking mbarrier wait and a flag wait's spin loop
//!   (`T.flag.wait`, `ir::FlagSpin`) are both sites; the site says which fields of the entry
//!   apply (the barrier's, or the flag's).
//! - **Entries are self-validating.** Each entry's fields are stored, `membar.sys` makes them
//!   visible to the host, then its marker ([`ENTRY_MAGIC`]); an entry without its marker was
//!   cut off by the trap.
//! - **The others are woken by an alarm.** Once the counter is non-zero, a wait that reaches
//!   its watchdog check (every `WAIT_SPINS_PER_CHECK` failed tries) records itself at once,
//!   without waiting for its own limit: every wait still blocked when the alarm rose is in the
//!   table within one check interval.
//! - **The first waiter is the finalizer.** Slot 0 sleeps a grace period ([`grace_ns`]: two
//!   check intervals at the try's suspend hint), so the others reach their checks, then copies
//!   the counter into the header, fences, writes [`RECORD_MAGIC`] and traps.
//! - **It cannot hang.** Every loop here is bounded by `%globaltimer`: the finalizer traps
//!   after the grace period, whatever the others do; every other recorder (and a lane whose
//!   lower lane records for it) sleeps until that trap, and traps itself after
//!   [`BACKSTOP_GRACES`] grace periods should it never come. No step waits for another thread.

use super::operand::value;
use super::wait_loop::WAIT_SPINS_PER_CHECK;
use crate::ir::{walk_insts, FlagSpin, Inst, Kernel, MbarrierOp, ParamKind, SharedKind, SourceLoc, Value, WaitOn};

/// One wait of a kernel the watchdog guards, as its record names it: its site number is its
/// index in [`Kernel::wait_sites`] (the printer numbers waits in the same order).
#[derive(Clone, Debug, PartialEq)]
pub struct WaitSite {
    /// The Rust line of the wait.
    pub loc: Option<SourceLoc>,
    pub kind: WaitKind,
}

/// What a site waits on.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitKind {
    /// A blocking mbarrier wait; the parity operand as printed (`0`, `1` or a register such as
    /// `%r12`), `None` for a wait on a state token.
    Barrier { parity: Option<String> },
    /// A flag wait's loop; the flag's buffer when it is a buffer parameter (not a pointer
    /// computed from one).
    Flag { buffer: Option<FlagBuffer> },
}

/// The buffer parameter holding a flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagBuffer {
    pub name: String,
}

impl Kernel {
    /// Every wait the watchdog guards (`MbarrierOp::Wait`, `FlagSpin::Try`) in printing
    /// order: the watchdog's site table.
    pub fn wait_sites(&self) -> Vec<WaitSite> {
        let mut sites = Vec::new();
        walk_insts(self.body(), &mut |inst, loc| match inst {
            Inst::Mbarrier(MbarrierOp::Wait { on, .. }) => {
                let parity = match on {
                    WaitOn::Parity(p) => Some(value(p)),
                    WaitOn::State(_) => None,
                };
                sites.push(WaitSite { loc, kind: WaitKind::Barrier { parity } });
            }
            Inst::FlagSpin(FlagSpin::Try { base, .. }) => {
                sites.push(WaitSite { loc, kind: WaitKind::Flag { buffer: self.flag_buffer(base) } })
            }
            _ => {}
        });
        sites
    }

    /// The buffer parameter whose register `base` is.
    fn flag_buffer(&self, base: &Value) -> Option<FlagBuffer> {
        let mut buffers = self.params().iter().filter(|p| matches!(p.kind, ParamKind::Global { .. }));
        buffers.find(|p| *base == Value::Reg(p.reg)).map(|p| FlagBuffer { name: p.name.clone() })
    }
}

/// The wait whose trap path is printed, with its operands.
pub enum Starved<'a> {
    /// A blocking mbarrier wait; `cta` spells `.shared::cta`.
    Barrier { bar: &'a Value, on: &'a WaitOn, cta: &'a str },
    /// A flag wait's failed try: the flag buffer's address, the flag's element index, the value
    /// waited for, the value read.
    Flag { base: &'a Value, index: &'a Value, expected: &'a Value, seen: &'a Value },
}

/// `.u64` module global: the device address of the record buffer (0: no record).
pub const RECORD_SYMBOL: &str = "phaser_watchdog_record";
/// `.u32` module global (device memory): how many starved waits took a slot of the table.
/// Non-zero is the alarm: a wait starved, the grid is about to trap.
pub const CLAIM_SYMBOL: &str = "phaser_watchdog_claim";
/// Written last into the header, after a system-scope fence: the finalizer's header is
/// complete when it holds this.
pub const RECORD_MAGIC: u32 = 0x5048_5744; // "PHWD"
/// Written last into an entry, after a system-scope fence: the entry is complete.
pub const ENTRY_MAGIC: u32 = 0x5048_5745; // "PHWE"
/// Words of the header, before the table.
pub const HEADER_WORDS: usize = 16;
/// Words of one table entry.
pub const ENTRY_WORDS: usize = 23;
/// Entries the table holds; starved waits past it are counted in the header, not written.
pub const ENTRY_CAPACITY: usize = 512;
/// Size of the record in 32-bit words.
pub const RECORD_WORDS: usize = HEADER_WORDS + ENTRY_CAPACITY * ENTRY_WORDS;
/// Written where a field does not apply (no barrier array holds the address; a wait on a
/// state token has no parity; a flag wait has no barrier).
pub const NONE: u32 = u32::MAX;
/// The finalizer's grace period never drops below this (no suspend hint: the check interval
/// is short, but the other SMs' waiters still need to reach their checks).
pub const GRACE_MIN_NS: u64 = 50_000_000;
/// ... nor exceeds this (a 10 ms hint would otherwise make it 1.28 s, more with larger hints).
pub const GRACE_MAX_NS: u64 = 2_000_000_000;
/// Recorders other than the finalizer trap themselves after this many grace periods, should
/// the finalizer's trap never come (it always does: this bounds the wait regardless).
pub const BACKSTOP_GRACES: u64 = 4;

/// Word offsets of the header's fields (written by the finalizer).
pub mod header {
    /// [`super::RECORD_MAGIC`] once the header is complete.
    pub const MAGIC: usize = 0;
    /// Slots claimed when the grace period ended (entries written: at most
    /// [`super::ENTRY_CAPACITY`]; the rest were dropped).
    pub const CLAIMED: usize = 1;
    /// [`super::kernel_tag`] of the finalizer's kernel.
    pub const KERNEL: usize = 2;
    /// The grace period in nanoseconds (64-bit, low word first).
    pub const GRACE_NS: usize = 3;
    /// `%nctaid.x/y/z`: the launch's grid.
    pub const GRID: usize = 5;
    /// `%ntid.x/y/z`: the launch's block.
    pub const BLOCK: usize = 8;
    /// `%dynamic_smem_size`: the launch's dynamic shared memory in bytes.
    pub const DYNAMIC_SHARED: usize = 11;
}

/// Word offsets of one entry's fields, from the entry's start
/// (`HEADER_WORDS + slot * ENTRY_WORDS`).
pub mod entry {
    /// [`super::ENTRY_MAGIC`] once the entry is complete.
    pub const MARKER: usize = 0;
    /// [`super::kernel_tag`] of the waiting kernel.
    pub const KERNEL: usize = 1;
    /// The wait's site: its index in [`crate::ir::Kernel::wait_sites`].
    pub const SITE: usize = 2;
    /// Index into `Kernel::shared` of the barrier array holding the barrier, or `NONE`.
    pub const ALLOC: usize = 3;
    /// The barrier's index in that array, or `NONE`.
    pub const INDEX: usize = 4;
    /// The parity waited for, or `NONE` for a wait on a state token.
    pub const PARITY: usize = 5;
    /// The parity of the barrier's current (incomplete) phase, from `test_wait.parity`.
    pub const PHASE_PARITY: usize = 6;
    /// The barrier's shared address.
    pub const BAR_ADDR: usize = 7;
    /// `%smid` of the warp.
    pub const SMID: usize = 8;
    /// How many lanes of the warp wait here on this barrier and parity (this entry stands
    /// for all of them).
    pub const LANES: usize = 9;
    /// Nanoseconds the recording lane had waited, since its first watchdog check (64-bit).
    pub const ELAPSED_NS: usize = 10;
    /// `%ctaid.x/y/z`.
    pub const CTA: usize = 12;
    /// `%tid.x/y/z` of the recording (lowest) lane.
    pub const THREAD: usize = 15;
    /// The barrier's 64-bit word as `ld.shared` reads it (opaque; low word first); a flag
    /// wait's: the flag buffer's device address.
    pub const RAW: usize = 18;
    /// A flag wait's: the flag's element index in its buffer (barrier waits leave the three
    /// flag words unwritten, flag waits the barrier's words from `ALLOC` to `BAR_ADDR` `NONE`).
    pub const FLAG_INDEX: usize = 20;
    /// A flag wait's: the value waited for (the wait passes once the flag reaches it).
    pub const FLAG_EXPECTED: usize = 21;
    /// A flag wait's: the value its last try read.
    pub const FLAG_SEEN: usize = 22;
}

/// The words the host zeroes before a launch: the header and each entry's marker (an entry
/// or a header without its magic word is not read; the rest of the words need no clearing).
pub fn words_cleared_before_launch() -> impl Iterator<Item = usize> {
    (0..HEADER_WORDS).chain((0..ENTRY_CAPACITY).map(|s| HEADER_WORDS + s * ENTRY_WORDS + entry::MARKER))
}

/// The kernel's tag in the record (FNV-1a of its name): which kernel a record is from, when
/// several may have run (a graph, streams).
pub fn kernel_tag(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// The finalizer's grace period for waits whose tries carry suspend hint `hint_ns`: two
/// check intervals (each up to `WAIT_SPINS_PER_CHECK` hinted tries), within
/// [`GRACE_MIN_NS`, `GRACE_MAX_NS`]. A wait that began blocking later than this after the
/// first starved one may be missed (it is not starved long enough to be sure anyway).
pub fn grace_ns(hint_ns: Option<u32>) -> u64 {
    let interval = WAIT_SPINS_PER_CHECK as u64 * hint_ns.unwrap_or(0) as u64;
    (2 * interval).clamp(GRACE_MIN_NS, GRACE_MAX_NS)
}

/// The module-scope declarations the trap path needs.
pub fn declarations() -> String {
    format!(
        "// The wait watchdog's record: address set by the runtime after loading (0: none), and its slot counter.\n\
         .visible .global .align 8 .u64 {RECORD_SYMBOL} = 0;\n\
         .visible .global .align 4 .u32 {CLAIM_SYMBOL} = 0;\n"
    )
}

/// The lines after the limit check of wait `label`'s watchdog: under the limit (`%wait_done`
/// set), the wait retries at `retry` unless the alarm is up (another wait starved: record this
/// one too); past the limit, or on the alarm, it falls through to the trap path.
pub fn alarm_check(label: u32, retry: &str) -> Vec<String> {
    let record = format!("$L_wd_record_{label}");
    vec![
        format!("\t@!%wait_done bra {record};"),
        "\t// watchdog: under the limit, but another wait starved (the alarm): record this one too".into(),
        format!("\tld.volatile.global.u32 %wait_rem, [{CLAIM_SYMBOL}];"),
        "\tsetp.eq.u32 %wait_done, %wait_rem, 0;".into(),
        format!("\t@%wait_done bra {retry};"),
        format!("{record}:"),
    ]
}

/// The lines that replace a bare `trap` in wait `site`'s timeout branch: take a slot, write
/// the entry, then trap (the finalizer) or sleep until the trap (the others). `starved` is the
/// wait with its operands; `elapsed` names the register holding the nanoseconds waited;
/// `label` is unique in the kernel; `grace` is [`grace_ns`].
pub fn trap_path(k: &Kernel, site: u32, starved: &Starved, elapsed: &str, label: u32, grace: u64) -> Vec<String> {
    let trap = format!("$L_wd_trap_{label}");
    let sleep = format!("$L_wd_sleep_{label}");
    let written = format!("$L_wd_written_{label}");
    let tag = kernel_tag(k.name());
    let at_entry = |w: usize| (HEADER_WORDS + w) * 4;
    let st = |w: usize, v: &str| format!("\tst.volatile.global.u32 [%wd_ent+{}], {v};", at_entry(w));
    let sth = |w: usize, v: &str| format!("\tst.volatile.global.u32 [%wd_rec+{}], {v};", w * 4);
    // The key the lanes of a warp at this wait match on: the barrier and parity, or the flag
    // and the value waited for.
    let key = match starved {
        Starved::Barrier { bar, on: WaitOn::Parity(p), .. } => [value(bar), value(p)],
        Starved::Barrier { bar, on: WaitOn::State(_), .. } => [value(bar), NONE.to_string()],
        Starved::Flag { index, expected, .. } => [value(index), value(expected)],
    };
    let mut v = vec![
        format!("\t// watchdog: record this starved wait (site {site}) in the table, then trap (emit::watchdog)"),
        "\t.reg .b64 %wd_rec, %wd_ent, %wd_raw, %wd_key, %wd_end;".into(),
        "\t.reg .b32 %wd_v, %wd_bar, %wd_par, %wd_lo, %wd_hi, %wd_slot, %wd_mask;".into(),
        "\t.reg .pred %wd_p;".into(),
        format!("\tld.volatile.global.u64 %wd_rec, [{RECORD_SYMBOL}];"),
        "\tsetp.eq.u64 %wd_p, %wd_rec, 0;".into(),
        format!("\t@%wd_p bra {trap};"),
        format!("\tmov.u32 %wd_bar, {};", key[0]),
        format!("\tmov.u32 %wd_par, {};", key[1]),
        // The lanes of this warp here on the same key: the lowest records them.
        "\tmov.b64 %wd_key, {%wd_bar, %wd_par};".into(),
        "\tactivemask.b32 %wd_mask;".into(),
        "\tmatch.any.sync.b64 %wd_mask, %wd_key, %wd_mask;".into(),
        "\tmov.u32 %wd_v, %lanemask_lt;".into(),
        "\tand.b32 %wd_v, %wd_v, %wd_mask;".into(),
        "\tsetp.ne.u32 %wd_p, %wd_v, 0;".into(),
        format!("\t@%wd_p bra {sleep};"),
        format!("\tatom.global.add.u32 %wd_slot, [{CLAIM_SYMBOL}], 1;"),
        format!("\tsetp.ge.u32 %wd_p, %wd_slot, {ENTRY_CAPACITY};"),
        format!("\t@%wd_p bra {written};"),
        format!("\tmad.wide.u32 %wd_ent, %wd_slot, {}, %wd_rec;", ENTRY_WORDS * 4),
        format!("\tmov.u32 %wd_v, {tag};"),
        st(entry::KERNEL, "%wd_v"),
        format!("\tmov.u32 %wd_v, {site};"),
        st(entry::SITE, "%wd_v"),
        format!("\tmov.u32 %wd_v, {NONE};"),
        st(entry::ALLOC, "%wd_v"),
        st(entry::INDEX, "%wd_v"),
    ];
    match starved {
        Starved::Barrier { cta, .. } => v.extend(barrier_fields(k, st, at_entry, cta)),
        Starved::Flag { base, seen, .. } => v.extend([
            st(entry::PARITY, "%wd_v"),
            st(entry::PHASE_PARITY, "%wd_v"),
            st(entry::BAR_ADDR, "%wd_v"),
            st(entry::FLAG_INDEX, "%wd_bar"),
            st(entry::FLAG_EXPECTED, "%wd_par"),
            format!("\tmov.u32 %wd_v, {};", value(seen)),
            st(entry::FLAG_SEEN, "%wd_v"),
            format!("\tmov.b64 {{%wd_lo, %wd_hi}}, {};", value(base)),
            st(entry::RAW, "%wd_lo"),
            st(entry::RAW + 1, "%wd_hi"),
        ]),
    }
    v.extend([
        "\tmov.u32 %wd_v, %smid;".into(),
        st(entry::SMID, "%wd_v"),
        "\tpopc.b32 %wd_v, %wd_mask;".into(),
        st(entry::LANES, "%wd_v"),
        format!("\tmov.b64 {{%wd_lo, %wd_hi}}, {elapsed};"),
        st(entry::ELAPSED_NS, "%wd_lo"),
        st(entry::ELAPSED_NS + 1, "%wd_hi"),
    ]);
    common_tail(k, v, st, sth, label, grace)
}

/// A barrier wait's fields of the entry: its array and index, parity, current phase, address
/// and raw word (`%wd_bar`, `%wd_par` hold the barrier's address and the parity).
fn barrier_fields(
    k: &Kernel,
    st: impl Fn(usize, &str) -> String,
    at_entry: impl Fn(usize) -> usize,
    cta: &str,
) -> Vec<String> {
    let mut v = Vec::new();
    // Which barrier array holds the address: one range check per array whose address the
    // kernel takes (the only ones a wait can name), against the base the entry computed once
    // (a `mov` of the symbol here would make ptxas read the shared window's base again).
    let (used, _) = super::printer::shared_bases_used(k.body());
    for a in used.into_iter().filter(|&a| k.alloc(a).kind == SharedKind::Barriers) {
        let (i, a) = (a.0, k.alloc(a));
        v.extend([
            format!("\tsub.u32 %wd_v, %wd_bar, {};", super::inst::shared_base_reg(Some(&a.name))),
            format!("\tsetp.lt.u32 %wd_p, %wd_v, {};", a.len.saturating_mul(8)),
            "\tshr.u32 %wd_v, %wd_v, 3;".into(),
            format!("\t@%wd_p st.volatile.global.u32 [%wd_ent+{}], %wd_v;", at_entry(entry::INDEX)),
            format!("\tmov.u32 %wd_v, {i};"),
            format!("\t@%wd_p st.volatile.global.u32 [%wd_ent+{}], %wd_v;", at_entry(entry::ALLOC)),
        ]);
    }
    v.extend([
        st(entry::PARITY, "%wd_par"),
        // test_wait.parity(0) succeeds when the phase with parity 0 completed, that is when
        // the current phase has parity 1.
        format!("\tmbarrier.test_wait.parity{cta}.b64 %wd_p, [%wd_bar], 0;"),
        "\tselp.u32 %wd_v, 1, 0, %wd_p;".into(),
        st(entry::PHASE_PARITY, "%wd_v"),
        st(entry::BAR_ADDR, "%wd_bar"),
        "\tld.volatile.shared.b64 %wd_raw, [%wd_bar];".into(),
        "\tmov.b64 {%wd_lo, %wd_hi}, %wd_raw;".into(),
        st(entry::RAW, "%wd_lo"),
        st(entry::RAW + 1, "%wd_hi"),
    ]);
    v
}

/// Every wait's rest of the trap path: CTA and thread, the marker, then the finalizer's header
/// and trap, or the others' sleep until it.
fn common_tail(
    k: &Kernel,
    mut v: Vec<String>,
    st: impl Fn(usize, &str) -> String,
    sth: impl Fn(usize, &str) -> String,
    label: u32,
    grace: u64,
) -> Vec<String> {
    let trap = format!("$L_wd_trap_{label}");
    let sleep = format!("$L_wd_sleep_{label}");
    let nap = format!("$L_wd_nap_{label}");
    let written = format!("$L_wd_written_{label}");
    let settle = format!("$L_wd_grace_{label}");
    let tag = kernel_tag(k.name());
    for (i, sreg) in ["%ctaid.x", "%ctaid.y", "%ctaid.z"].into_iter().enumerate() {
        v.push(format!("\tmov.u32 %wd_v, {sreg};"));
        v.push(st(entry::CTA + i, "%wd_v"));
    }
    for (i, sreg) in ["%tid.x", "%tid.y", "%tid.z"].into_iter().enumerate() {
        v.push(format!("\tmov.u32 %wd_v, {sreg};"));
        v.push(st(entry::THREAD + i, "%wd_v"));
    }
    v.extend([
        // Every field reaches host memory before the marker says the entry is complete.
        "\tmembar.sys;".into(),
        format!("\tmov.u32 %wd_v, {ENTRY_MAGIC};"),
        st(entry::MARKER, "%wd_v"),
        "\tmembar.sys;".into(),
        format!("{written}:"),
        "\tsetp.ne.u32 %wd_p, %wd_slot, 0;".into(),
        format!("\t@%wd_p bra {sleep};"),
        // The finalizer (slot 0): let the other starved waits reach a check and record, then
        // copy the count and the launch shape into the header and trap.
        "\tmov.u64 %wd_end, %globaltimer;".into(),
        format!("\tadd.u64 %wd_end, %wd_end, {grace};"),
        format!("{settle}:"),
        "\tnanosleep.u32 100000;".into(),
        "\tmov.u64 %wd_raw, %globaltimer;".into(),
        "\tsetp.lt.u64 %wd_p, %wd_raw, %wd_end;".into(),
        format!("\t@%wd_p bra {settle};"),
        format!("\tld.volatile.global.u32 %wd_v, [{CLAIM_SYMBOL}];"),
        sth(header::CLAIMED, "%wd_v"),
        format!("\tmov.u32 %wd_v, {tag};"),
        sth(header::KERNEL, "%wd_v"),
        format!("\tmov.u32 %wd_v, {};", grace as u32),
        sth(header::GRACE_NS, "%wd_v"),
        format!("\tmov.u32 %wd_v, {};", (grace >> 32) as u32),
        sth(header::GRACE_NS + 1, "%wd_v"),
    ]);
    for (field, regs) in
        [(header::GRID, ["%nctaid.x", "%nctaid.y", "%nctaid.z"]), (header::BLOCK, ["%ntid.x", "%ntid.y", "%ntid.z"])]
    {
        for (i, sreg) in regs.into_iter().enumerate() {
            v.push(format!("\tmov.u32 %wd_v, {sreg};"));
            v.push(sth(field + i, "%wd_v"));
        }
    }
    v.extend([
        "\tmov.u32 %wd_v, %dynamic_smem_size;".into(),
        sth(header::DYNAMIC_SHARED, "%wd_v"),
        "\tmembar.sys;".into(),
        format!("\tmov.u32 %wd_v, {RECORD_MAGIC};"),
        sth(header::MAGIC, "%wd_v"),
        "\tmembar.sys;".into(),
        format!("\tbra.uni {trap};"),
        // The others: sleep until the finalizer's trap ends the grid, and trap themselves
        // after the backstop should it not.
        format!("{sleep}:"),
        "\tmov.u64 %wd_end, %globaltimer;".into(),
        format!("\tadd.u64 %wd_end, %wd_end, {};", grace.saturating_mul(BACKSTOP_GRACES)),
        format!("{nap}:"),
        "\tnanosleep.u32 1000000;".into(),
        "\tmov.u64 %wd_raw, %globaltimer;".into(),
        "\tsetp.lt.u64 %wd_p, %wd_raw, %wd_end;".into(),
        format!("\t@%wd_p bra {nap};"),
        format!("{trap}:"),
        "\ttrap; // wait watchdog: likely deadlock".into(),
    ]);
    v
}
