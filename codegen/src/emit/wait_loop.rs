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
use super::operand::value;
use crate::ir::{MbarrierOp, Ordering, Value, WaitOn};

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
            super::watchdog::trap_path(cx.kernel, site, bar, on, "%wait_dt", n, cx.cta(), grace),
        )
    } else {
        (
            vec![format!("\t@%wait_done bra $L_wait_{n};")],
            vec!["\ttrap; // mbarrier wait watchdog: likely deadlock".into()],
        )
    };
    v.extend(watchdog_check(limit, under_limit, trap));
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
fn watchdog_check(limit: u64, under_limit: Vec<String>, trap: Vec<String>) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "\t// watchdog: a wait that outlasts the limit is a deadlock; trap (a kernel fault) instead of hanging".into(),
        "\tmov.u64 %wait_dt, %globaltimer;".into(),
        format!("\tsetp.eq.u32 %wait_done, %wait_spins, {WAIT_SPINS_PER_CHECK};"),
        "\t@%wait_done mov.u64 %wait_t0, %wait_dt;".into(),
        "\tsub.u64 %wait_dt, %wait_dt, %wait_t0;".into(),
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
