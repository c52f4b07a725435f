//! The mbarrier family: every PTX `mbarrier.*` form the project emits.
//!
//! Semantics (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"):
//! a phase completes when its pending arrival count and its tx-count are both zero; then the
//! pending count resets to the expected count and the phase parity flips.

use super::value::{Reg, Value};

/// Memory-ordering semantics of an arrive (`.release` by default) or a wait (`.acquire`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sem {
    Release,
    Acquire,
    /// PTX ISA 8.6+.
    Relaxed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Cluster,
}

/// Whether the barrier address is in this CTA (`.shared::cta`) or is a cluster address
/// of a possibly remote CTA's barrier (`.shared::cluster`, from `mapa`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarSpace {
    Cta,
    Cluster,
}

/// What a wait compares against: the phase parity (0/1) or a state token from an arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitOn {
    Parity(Value),
    State(Value),
}

/// Ordering qualifiers shared by most forms; `None` means "PTX default" (nothing printed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ordering {
    pub sem: Option<Sem>,
    pub scope: Option<Scope>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MbarrierOp {
    /// `mbarrier.init.shared::cta.b64 [bar], count`.
    Init { bar: Value, count: Value },
    /// `mbarrier.inval.shared::cta.b64 [bar]`.
    Inval { bar: Value },
    /// `mbarrier.arrive[_drop]`: `count` arrivals (1 when `None`). `state` receives the
    /// phase token (not available for remote `.shared::cluster` arrives).
    Arrive { bar: Value, count: Option<Value>, order: Ordering, space: BarSpace, state: Option<Reg>, drop: bool },
    /// `mbarrier.arrive.expect_tx`: one arrival plus `tx += bytes`, atomically.
    ArriveExpectTx { bar: Value, bytes: Value, order: Ordering, space: BarSpace, state: Option<Reg> },
    /// `mbarrier.expect_tx`: `tx += bytes`, no arrival.
    ExpectTx { bar: Value, bytes: Value, scope: Scope, space: BarSpace },
    /// `mbarrier.complete_tx`: `tx -= bytes`, as the copy engine does when bytes land.
    CompleteTx { bar: Value, bytes: Value, scope: Scope, space: BarSpace },
    /// `mbarrier.test_wait[.parity]`: non-blocking probe.
    TestWait { done: Reg, bar: Value, on: WaitOn, order: Ordering },
    /// `mbarrier.try_wait[.parity]`: one potentially-blocking attempt (hardware time-limited).
    TryWait { done: Reg, bar: Value, on: WaitOn, hint: Option<Value>, order: Ordering },
    /// A wait that returns only once the phase completed: a `try_wait` retry loop in PTX.
    Wait { bar: Value, on: WaitOn, order: Ordering },
    /// `mbarrier.pending_count.b64 dst, state`.
    PendingCount { dst: Reg, state: Value },
}

/// The barrier operand of `$op` (a `&MbarrierOp` or a `&mut MbarrierOp`: one match serves
/// both, here and in `Inst`'s barrier operand, `ir/operands.rs`).
macro_rules! mbarrier_operand {
    ($op:expr) => {
        match $op {
            MbarrierOp::Init { bar, .. }
            | MbarrierOp::Inval { bar }
            | MbarrierOp::Arrive { bar, .. }
            | MbarrierOp::ArriveExpectTx { bar, .. }
            | MbarrierOp::ExpectTx { bar, .. }
            | MbarrierOp::CompleteTx { bar, .. }
            | MbarrierOp::TestWait { bar, .. }
            | MbarrierOp::TryWait { bar, .. }
            | MbarrierOp::Wait { bar, .. } => Some(bar),
            MbarrierOp::PendingCount { .. } => None,
        }
    };
}
pub(crate) use mbarrier_operand;

impl MbarrierOp {
    /// The barrier address this op touches, if any.
    pub fn barrier(&self) -> Option<Value> {
        mbarrier_operand!(self).copied()
    }
}
