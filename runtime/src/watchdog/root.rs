//! The likely root of a deadlock the watchdog recorded: the starved waits that explain the
//! others. The GPU sees only who was blocked where, so this is a rule, not a proof; the
//! simulator's checker (the replay the report suggests) names the cause with certainty.
//!
//! - All starved waits on one barrier: that barrier's phase lacks something no thread will
//!   bring (an arrival, bytes), and it is the root.
//! - A circular wait at the first phase (every starved wait is for parity 0 of a barrier in
//!   its phase of parity 0, on two or more barriers): the pipeline's roles each wait for the
//!   other to go first. The role that must go first is the one releasing buffers: its waits
//!   are on barriers no data lands on (no `expect_tx`, copy or `complete_tx` names them, the
//!   `empty` side), so those waits are the root and the waits on data barriers (`full`) are
//!   their symptoms. This is the simulator's wrong-start-parity finding, seen from the GPU.

use super::report::WaitGroup;
use phaser_codegen::ir::{walk_insts, AllocId, ArithOp, BinOp, Inst, Kernel, MbarrierOp, MemoryOp, Reg};
use std::collections::{BTreeSet, HashMap};

/// The groups (indices into `WatchdogReport::groups`) that are the likely cause, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LikelyRoot {
    pub groups: Vec<usize>,
    pub why: String,
}

/// The names of the barrier arrays that carry data: some `expect_tx`, `complete_tx` or async
/// copy registers bytes on one of their barriers. The barrier operand is traced back through
/// the address arithmetic `barrier_at` emits (`SharedAddr` plus an offset).
pub(crate) fn data_barrier_arrays(k: &Kernel) -> BTreeSet<String> {
    let mut base: HashMap<Reg, AllocId> = HashMap::new();
    let mut data = BTreeSet::new();
    walk_insts(k.body(), &mut |inst, _| {
        let traced = |v: &phaser_codegen::ir::Value, base: &HashMap<Reg, AllocId>| {
            v.as_reg().and_then(|r| base.get(&r).copied())
        };
        match inst {
            Inst::Memory(MemoryOp::SharedAddr { dst, alloc }) => {
                base.insert(*dst, *alloc);
            }
            Inst::Arith(ArithOp::Binary { op: BinOp::Add, dst, a, b }) => {
                if let Some(a) = traced(a, &base).or_else(|| traced(b, &base)) {
                    base.insert(*dst, a);
                }
            }
            Inst::Arith(ArithOp::Mov { dst, src } | ArithOp::Cvt { dst, src, .. }) => {
                if let Some(a) = traced(src, &base) {
                    base.insert(*dst, a);
                }
            }
            _ => {}
        }
        // Bytes land through `expect_tx`/`complete_tx` and async copies (a `cp.async`
        // arrival is an arrival, not bytes).
        let carries_bytes = match inst {
            Inst::Mbarrier(op) => {
                matches!(
                    op,
                    MbarrierOp::ArriveExpectTx { .. } | MbarrierOp::ExpectTx { .. } | MbarrierOp::CompleteTx { .. }
                )
            }
            Inst::Tma(_) => true,
            Inst::Memory(op) => !matches!(op, MemoryOp::CpAsyncMbarrierArrive { .. }),
            _ => false,
        };
        if carries_bytes {
            if let Some(a) = inst.barrier().and_then(|b| traced(b, &base)) {
                data.insert(k.alloc(a).name.clone());
            }
        }
    });
    data
}

/// The likely root among `groups` (still-blocked groups only), given the data barriers.
pub(crate) fn likely_root(groups: &[WaitGroup], data: &BTreeSet<String>) -> Option<LikelyRoot> {
    let blocked: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].still_blocked).collect();
    // A flag nobody signals starves its waiters whatever the barriers do; waits on barriers
    // behind it are symptoms (the warps that would arrive are the ones spinning).
    let flags: Vec<usize> = blocked.iter().copied().filter(|&i| groups[i].flag.is_some()).collect();
    if !flags.is_empty() {
        return Some(LikelyRoot {
            why: "a flag that is never signalled (the simulator's infinite-loop report names the same flag):                   a missing or misdirected `flag.signal`, or a signal of an older round's value; any waits on                   barriers are symptoms"
                .into(),
            groups: flags,
        });
    }
    let mut barriers: Vec<&str> = blocked.iter().map(|&i| groups[i].barrier.as_str()).collect();
    barriers.sort();
    barriers.dedup();
    match barriers.as_slice() {
        [] => None,
        [one] => Some(LikelyRoot {
            groups: blocked,
            why: format!(
                "every starved wait is on `{one}`: its phase lacks arrivals or transaction bytes that no thread will \
                 bring (a missing arrive, an expect_tx larger than the copies deliver, an init count larger than the \
                 arrivals per phase)"
            ),
        }),
        _ => {
            let first_phase = blocked.iter().all(|&i| groups[i].parity == Some(0) && groups[i].phase_parity == 0);
            let on_data = |i: &usize| groups[*i].array.as_ref().is_some_and(|a| data.contains(a));
            let (fed, release): (Vec<usize>, Vec<usize>) = blocked.iter().partition(|i| on_data(i));
            if !first_phase || fed.is_empty() || release.is_empty() {
                return None;
            }
            let names = |v: &[usize]| {
                let mut n: Vec<String> = v.iter().map(|&i| format!("`{}`", groups[i].barrier)).collect();
                n.dedup();
                n.join(", ")
            };
            Some(LikelyRoot {
                why: format!(
                    "a circular wait at the first phase: the waits on {} (no data lands on them) block on parity 0 of \
                     their fresh phase, which only the waiters on {} would complete, and those wait for data that \
                     comes only after the first waits pass. The releasing side must start on parity 1, which a \
                     fresh barrier satisfies at once (producers on `empty` start at phase 1); the waits on {} are \
                     symptoms",
                    names(&release),
                    names(&fed),
                    names(&fed)
                ),
                groups: release,
            })
        }
    }
}
