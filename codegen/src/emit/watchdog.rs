//! The wait watchdog's trap path: before a starved blocking wait traps, the first thread to
//! time out writes a record of what it waited on into a buffer the runtime reads after the
//! fault (mapped, pinned host memory: it survives the sticky error that poisons the context).
//!
//! The record's layout is defined here, once; the runtime decodes it with these constants.
//! The kernel finds the record through a module global ([`RECORD_SYMBOL`], 0 when nobody
//! set it: then the thread just traps) and claims it with a compare-and-swap on another
//! ([`CLAIM_SYMBOL`], device memory), so one thread writes it; the others sleep until that
//! thread's `trap` ends the grid (trapping at once could end it before the record is out).

use super::operand::value;
use crate::ir::{walk_insts, Inst, Kernel, MbarrierOp, SharedKind, SourceLoc, Value, WaitOn};

/// One blocking mbarrier wait of a kernel, as the watchdog's record names it: its site
/// number is its index in [`Kernel::wait_sites`] (the printer numbers waits in the same order).
#[derive(Clone, Debug, PartialEq)]
pub struct WaitSite {
    /// The Rust line of the wait.
    pub loc: Option<SourceLoc>,
    /// The parity operand as printed (`0`, `1` or a register such as `%r12`); `None` for a
    /// wait on a state token.
    pub parity: Option<String>,
}

impl Kernel {
    /// Every blocking wait (`MbarrierOp::Wait`) in printing order: the watchdog's site table.
    pub fn wait_sites(&self) -> Vec<WaitSite> {
        let mut sites = Vec::new();
        walk_insts(self.body(), &mut |inst, loc| {
            if let Inst::Mbarrier(MbarrierOp::Wait { on, .. }) = inst {
                let parity = match on {
                    WaitOn::Parity(p) => Some(value(p)),
                    WaitOn::State(_) => None,
                };
                sites.push(WaitSite { loc, parity });
            }
        });
        sites
    }
}

/// `.u64` module global: the device address of the record buffer (0: no record).
pub const RECORD_SYMBOL: &str = "phaser_watchdog_record";
/// `.u32` module global: 0 until a timed-out thread claims the record.
pub const CLAIM_SYMBOL: &str = "phaser_watchdog_claim";
/// Written last, after a system-scope fence: a record is complete when it holds this.
pub const RECORD_MAGIC: u32 = 0x5048_5744; // "PHWD"
/// Size of the record in 32-bit words.
pub const RECORD_WORDS: usize = 32;
/// Written where a field does not apply (no barrier array holds the address; a wait on a
/// state token has no parity).
pub const NONE: u32 = u32::MAX;

/// Word offsets of the record's fields.
pub mod word {
    /// [`super::RECORD_MAGIC`] once the record is complete.
    pub const MAGIC: usize = 0;
    /// The wait's site: its index in [`crate::ir::Kernel::wait_sites`].
    pub const SITE: usize = 1;
    /// Index into `Kernel::shared` of the barrier array holding the barrier, or `NONE`.
    pub const ALLOC: usize = 2;
    /// The barrier's index in that array, or `NONE`.
    pub const INDEX: usize = 3;
    /// The parity waited for, or `NONE` for a wait on a state token.
    pub const PARITY: usize = 4;
    /// The parity of the barrier's current (incomplete) phase, from `test_wait.parity`.
    pub const PHASE_PARITY: usize = 5;
    /// The barrier's shared address.
    pub const BAR_ADDR: usize = 6;
    /// `%smid` of the thread.
    pub const SMID: usize = 7;
    /// The barrier's 64-bit word as `ld.shared` reads it (opaque; low word first).
    pub const RAW: usize = 8;
    /// Nanoseconds the thread had waited when it gave up (64-bit, low word first).
    pub const ELAPSED_NS: usize = 10;
    /// `%ctaid.x/y/z`.
    pub const CTA: usize = 12;
    /// `%tid.x/y/z`.
    pub const THREAD: usize = 15;
}

/// The module-scope declarations the trap path needs.
pub fn declarations() -> String {
    format!(
        "// The wait watchdog's record: address set by the runtime after loading (0: none), and its claim.\n\
         .visible .global .align 8 .u64 {RECORD_SYMBOL} = 0;\n\
         .visible .global .align 4 .u32 {CLAIM_SYMBOL} = 0;\n"
    )
}

/// The lines that replace a bare `trap` in wait `site`'s timeout branch: claim, record, trap.
/// `bar` and `on` are the wait's operands; `elapsed` names the register holding the
/// nanoseconds waited; `label` is unique in the kernel. `cta` spells `.shared::cta`.
pub fn trap_path(k: &Kernel, site: u32, bar: &Value, on: &WaitOn, elapsed: &str, label: u32, cta: &str) -> Vec<String> {
    let done = format!("$L_wd_trap_{label}");
    let sleep = format!("$L_wd_sleep_{label}");
    let st = |w: usize, v: &str| format!("\tst.volatile.global.u32 [%wd_rec+{}], {v};", w * 4);
    let mut v = vec![
        format!("\t// watchdog: record which wait starved (site {site}), then trap"),
        "\t.reg .b64 %wd_rec, %wd_raw;".into(),
        "\t.reg .b32 %wd_v, %wd_bar, %wd_lo, %wd_hi;".into(),
        "\t.reg .pred %wd_p;".into(),
        format!("\tld.volatile.global.u64 %wd_rec, [{RECORD_SYMBOL}];"),
        "\tsetp.eq.u64 %wd_p, %wd_rec, 0;".into(),
        format!("\t@%wd_p bra {done};"),
        format!("\tatom.global.cas.b32 %wd_v, [{CLAIM_SYMBOL}], 0, 1;"),
        "\tsetp.ne.u32 %wd_p, %wd_v, 0;".into(),
        format!("\t@%wd_p bra {sleep};"),
        format!("\tmov.u32 %wd_bar, {};", value(bar)),
        format!("\tmov.u32 %wd_v, {site};"),
        st(word::SITE, "%wd_v"),
        format!("\tmov.u32 %wd_v, {NONE};"),
        st(word::ALLOC, "%wd_v"),
        st(word::INDEX, "%wd_v"),
    ];
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
            format!("\t@%wd_p st.volatile.global.u32 [%wd_rec+{}], %wd_v;", word::INDEX * 4),
            format!("\tmov.u32 %wd_v, {i};"),
            format!("\t@%wd_p st.volatile.global.u32 [%wd_rec+{}], %wd_v;", word::ALLOC * 4),
        ]);
    }
    let parity = match on {
        WaitOn::Parity(p) => value(p),
        WaitOn::State(_) => NONE.to_string(),
    };
    v.extend([
        format!("\tmov.u32 %wd_v, {parity};"),
        st(word::PARITY, "%wd_v"),
        // test_wait.parity(0) succeeds when the phase with parity 0 completed, that is when
        // the current phase has parity 1.
        format!("\tmbarrier.test_wait.parity{cta}.b64 %wd_p, [%wd_bar], 0;"),
        "\tselp.u32 %wd_v, 1, 0, %wd_p;".into(),
        st(word::PHASE_PARITY, "%wd_v"),
        st(word::BAR_ADDR, "%wd_bar"),
        "\tmov.u32 %wd_v, %smid;".into(),
        st(word::SMID, "%wd_v"),
        "\tld.volatile.shared.b64 %wd_raw, [%wd_bar];".into(),
        "\tmov.b64 {%wd_lo, %wd_hi}, %wd_raw;".into(),
        st(word::RAW, "%wd_lo"),
        st(word::RAW + 1, "%wd_hi"),
        format!("\tmov.b64 {{%wd_lo, %wd_hi}}, {elapsed};"),
        st(word::ELAPSED_NS, "%wd_lo"),
        st(word::ELAPSED_NS + 1, "%wd_hi"),
    ]);
    for (i, sreg) in ["%ctaid.x", "%ctaid.y", "%ctaid.z"].into_iter().enumerate() {
        v.push(format!("\tmov.u32 %wd_v, {sreg};"));
        v.push(st(word::CTA + i, "%wd_v"));
    }
    for (i, sreg) in ["%tid.x", "%tid.y", "%tid.z"].into_iter().enumerate() {
        v.push(format!("\tmov.u32 %wd_v, {sreg};"));
        v.push(st(word::THREAD + i, "%wd_v"));
    }
    v.extend([
        // Every field reaches host memory before the magic word says the record is complete.
        "\tmembar.sys;".into(),
        format!("\tmov.u32 %wd_v, {RECORD_MAGIC};"),
        st(word::MAGIC, "%wd_v"),
        "\tmembar.sys;".into(),
        format!("\tbra.uni {done};"),
        // Another thread owns the record: sleep until its trap ends the grid.
        format!("{sleep}:"),
        "\tnanosleep.u32 1000000;".into(),
        format!("\tbra.uni {sleep};"),
        format!("{done}:"),
        "\ttrap; // mbarrier wait watchdog: likely deadlock".into(),
    ]);
    v
}
