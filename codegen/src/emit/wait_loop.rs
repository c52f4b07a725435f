//! The blocking mbarrier wait (`MbarrierOp::Wait`): the `try_wait` retry loop on every
//! pipeline's hot path, and the watchdog that turns a deadlock into a kernel fault.
//!
//! What ptxas (13.x) makes of the PTX decides the cost, so the forms here are chosen by their
//! SASS (see `bench/gemm.md`, "The wait loop"):
//! - Without a watchdog the wait is CUTLASS's `ClusterBarrier::wait` loop *exactly*
//!   (`L: try_wait.parity P, [bar], parity, hint; @P bra DONE; bra L; DONE:`). ptxas recognizes
//!   that loop and emits what nvcc emits for it: one `SYNCS.PHASECHK.TRANS64.TRYWAIT` and a
//!   not-taken branch inline, the `NANOSLEEP.SYNCS` retry loop out of line; the wait is then
//!   no barrier to scheduling, so independent work moves across it.
//! - ptxas recognizes only that exact loop: any instruction that counts failed tries (the
//!   watchdog needs one) turns the wait into an ordinary loop. Two watchdog forms therefore
//!   exist, [`WaitLoop::FirstTry`] (the default), [`WaitLoop::HintedFirst`] and
//!   [`WaitLoop::InLoop`]; `bench_pingpong` measures each against nvcc.
//!
//! The watchdog's trap path is one block (`watchdog_check`): it runs once per
//! [`WAIT_SPINS_PER_CHECK`] failed tries, never on a wait that succeeds at its first try.

use super::inst::InstCtx;
use super::operand::{reg, value};
use super::watchdog::Starved;
use crate::ir::{FlagSpin, MbarrierOp, Ordering, Value, WaitOn};

/// Failed `try_wait`s of a blocking wait between two reads of `%globaltimer` (the watchdog's
/// clock). Each try may sleep up to the suspend-time hint, so a deadlock is noticed within
/// about this many hints plus the timeout; a wait that succeeds never reads the timer.
pub const WAIT_SPINS_PER_CHECK: u32 = 64;

/// How a blocking wait with a watchdog is laid out (without a watchdog it is always
/// CUTLASS's exact loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WaitLoop {
    /// One `try_wait` without a hint, then a retry loop that counts failed tries and consults
    /// the watchdog every [`WAIT_SPINS_PER_CHECK`]. SASS fast path: `TRYWAIT` on a uniform
    /// address and a branch that is taken on success (ptxas places the retry loop inline).
    #[default]
    FirstTry,
    /// The retry loop is the wait: its head is the hinted `try_wait`, the spin counter is
    /// reset before it. SASS fast path: `TRYWAIT` (with the hint's `NANOSLEEP`/`PHASECHK`
    /// predicated off) and a not-taken branch, plus the counter's reset.
    InLoop,
    /// [`WaitLoop::FirstTry`] whose first `try_wait` carries the suspend-time hint: the fast
    /// path is the head of CUTLASS's loop (a waiter whose partner has not arrived sleeps in
    /// the hardware until the phase completes instead of returning after the system's own
    /// limit and entering the counting loop); failed tries are counted from the second on.
    HintedFirst,
}

impl WaitLoop {
    /// Every layout, in the order tools list them.
    pub const ALL: [WaitLoop; 3] = [WaitLoop::FirstTry, WaitLoop::HintedFirst, WaitLoop::InLoop];

    /// The layout named `name` (as [`WaitLoop::name`] spells it).
    pub fn from_name(name: &str) -> Option<WaitLoop> {
        WaitLoop::ALL.into_iter().find(|w| w.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            WaitLoop::FirstTry => "first-try",
            WaitLoop::InLoop => "in-loop",
            WaitLoop::HintedFirst => "hinted-first",
        }
    }
}

/// The lines of `MbarrierOp::Wait` (a `{ }` scope with its own registers).
pub(crate) fn wait(op: &MbarrierOp, cx: &mut InstCtx) -> Vec<String> {
    let MbarrierOp::Wait { bar, on, order } = op else { unreachable!("not a blocking wait") };
    *cx.labels += 1;
    let n = *cx.labels;
    // Every blocking wait is a site of `Kernel::wait_sites`, numbered in program order (the
    // watchdog record names the site that starved).
    let site = *cx.wait_sites;
    *cx.wait_sites += 1;
    let try_wait = TryWait { bar: *bar, on: *on, order: *order, cta: cx.cta() };
    let hint = cx.wait_suspend_hint_ns.map(|h| format!(", {h}")).unwrap_or_default();
    let mut v = vec!["{".into(), "\t.reg .pred %wait_done;".into()];
    let Some(limit) = cx.wait_timeout_ns else {
        // CUTLASS's `ClusterBarrier::wait`, to the letter: the form ptxas recognizes.
        v.extend([
            format!("$L_wait_{n}:"),
            try_wait.line(&hint),
            format!("\t@%wait_done bra $L_waited_{n};"),
            format!("\tbra.uni $L_wait_{n};"),
            format!("$L_waited_{n}:"),
            "}".into(),
        ]);
        return v;
    };
    v.extend(["\t.reg .b32 %wait_spins, %wait_rem;".into(), "\t.reg .b64 %wait_t0, %wait_dt;".into()]);
    match cx.wait_loop {
        WaitLoop::FirstTry => v.extend([try_wait.line(""), format!("\t@%wait_done bra $L_waited_{n};")]),
        WaitLoop::HintedFirst => v.extend([try_wait.line(&hint), format!("\t@%wait_done bra $L_waited_{n};")]),
        WaitLoop::InLoop => {}
    }
    v.extend([
        "\tmov.u32 %wait_spins, 0;".into(),
        format!("$L_wait_{n}:"),
        try_wait.line(&hint),
        format!("\t@%wait_done bra $L_waited_{n};"),
    ]);
    v.extend(count_failure(n));
    let (under_limit, trap) = if cx.watchdog_record {
        let grace = super::watchdog::grace_ns(cx.wait_suspend_hint_ns);
        (
            super::watchdog::alarm_check(n, &format!("$L_wait_{n}")),
            super::watchdog::trap_path(
                cx.kernel,
                site,
                &Starved::Barrier { bar, on, cta: cx.cta() },
                "%wait_dt",
                n,
                grace,
            ),
        )
    } else {
        (
            vec![format!("\t@%wait_done bra $L_wait_{n};")],
            vec!["\ttrap; // mbarrier wait watchdog: likely deadlock".into()],
        )
    };
    v.extend(watchdog_check(limit, "%wait_spins", "%wait_t0", under_limit, trap));
    v.push(format!("$L_waited_{n}:"));
    v.push("}".into());
    v
}

/// A failed try: count it and retry, except every [`WAIT_SPINS_PER_CHECK`]-th failure, which
/// falls through to the watchdog. The count is never reset during a wait, so the watchdog
/// knows its first check (`%wait_spins == WAIT_SPINS_PER_CHECK`).
fn count_failure(n: u32) -> Vec<String> {
    const { assert!(WAIT_SPINS_PER_CHECK.is_power_of_two()) };
    vec![
        "\tadd.u32 %wait_spins, %wait_spins, 1;".into(),
        format!("\tand.b32 %wait_rem, %wait_spins, {};", WAIT_SPINS_PER_CHECK - 1),
        "\tsetp.ne.u32 %wait_done, %wait_rem, 0;".into(),
        format!("\t@%wait_done bra $L_wait_{n};"),
    ]
}

/// The watchdog, consulted once per [`WAIT_SPINS_PER_CHECK`] failed tries: the wait's first
/// check starts its clock, a later one traps once the wait has lasted `limit` ns. The trap
/// path is this one block: `under_limit` decides, with `%wait_done` set while under the
/// limit, whether to retry (with the record: unless another wait starved,
/// `watchdog::alarm_check`); `trap` is what runs otherwise (the record's entry, then `trap`).
fn watchdog_check(limit: u64, spins: &str, t0: &str, under_limit: Vec<String>, trap: Vec<String>) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "\t// watchdog: a wait that outlasts the limit is a deadlock; trap (a kernel fault) instead of hanging".into(),
        "\tmov.u64 %wait_dt, %globaltimer;".into(),
        format!("\tsetp.eq.u32 %wait_done, {spins}, {WAIT_SPINS_PER_CHECK};"),
        format!("\t@%wait_done mov.u64 {t0}, %wait_dt;"),
        format!("\tsub.u64 %wait_dt, %wait_dt, {t0};"),
        format!("\tsetp.lt.u64 %wait_done, %wait_dt, {limit};"),
    ];
    v.extend(under_limit);
    v.extend(trap);
    v
}

/// One `mbarrier.try_wait` of the wait, with or without the suspend-time hint.
struct TryWait {
    bar: Value,
    on: WaitOn,
    order: Ordering,
    cta: &'static str,
}

impl TryWait {
    fn line(&self, hint: &str) -> String {
        let (form, arg) = super::inst::wait_on(&self.on);
        format!(
            "\tmbarrier.try_wait{form}{}{}.b64 %wait_done, [{}], {arg}{hint};",
            super::inst::wait_order_suffix(&self.order),
            self.cta,
            value(&self.bar)
        )
    }
}

/// A flag wait's watchdog marks (`ir::FlagSpin`): nothing without a watchdog; with one,
/// `Start` zeroes the counters and each `Try` (a failed try of the builder's loop) counts and,
/// every [`WAIT_SPINS_PER_CHECK`] tries, consults the watchdog exactly as a barrier wait does
/// (the same limit, alarm and record; the entry names the flag).
pub(crate) fn flag_spin(s: &FlagSpin, cx: &mut InstCtx) -> Vec<String> {
    let Some(limit) = cx.wait_timeout_ns else { return Vec::new() };
    let (base, index, expected, seen, spins, started) = match s {
        FlagSpin::Start { spins, started } => {
            return vec![format!("mov.u32 {}, 0;", reg(*spins)), format!("mov.u64 {}, 0;", reg(*started))];
        }
        FlagSpin::Try { base, index, expected, seen, spins, started } => {
            (base, index, expected, seen, reg(*spins), reg(*started))
        }
    };
    *cx.labels += 1;
    let n = *cx.labels;
    // A site of `Kernel::wait_sites` like a barrier wait, numbered in the same program order.
    let site = *cx.wait_sites;
    *cx.wait_sites += 1;
    let tried = format!("$L_flag_tried_{n}");
    let mut v = vec![
        "{".into(),
        "\t.reg .pred %wait_done;".into(),
        "\t.reg .b32 %wait_rem;".into(),
        "\t.reg .b64 %wait_dt;".into(),
        format!("\tadd.u32 {spins}, {spins}, 1;"),
        format!("\tand.b32 %wait_rem, {spins}, {};", WAIT_SPINS_PER_CHECK - 1),
        "\tsetp.ne.u32 %wait_done, %wait_rem, 0;".into(),
        format!("\t@%wait_done bra {tried};"),
    ];
    let (under_limit, trap) = if cx.watchdog_record {
        // The finalizer may be this wait: its grace lets the kernel's hinted barrier waits reach a check.
        let grace = super::watchdog::grace_ns(cx.wait_suspend_hint_ns);
        let starved = Starved::Flag { base, index, expected, seen };
        (
            super::watchdog::alarm_check(n, &tried),
            super::watchdog::trap_path(cx.kernel, site, &starved, "%wait_dt", n, grace),
        )
    } else {
        (
            vec![format!("\t@%wait_done bra {tried};")],
            vec!["\ttrap; // flag wait watchdog: a flag nobody signals".into()],
        )
    };
    v.extend(watchdog_check(limit, &spins, &started, under_limit, trap));
    v.push(format!("{tried}:"));
    v.push("}".into());
    v
}
