//! `T.ptx.mbarrier.*` and `T.ptx.mapa`.

use crate::builder::ArriveOpts;
use crate::ir::{Ordering, Scope, Sem};

const SEM_ARRIVE: super::Choice<Sem> = choice!["release" => Sem::Release, "relaxed" => Sem::Relaxed];
const SEM_WAIT: super::Choice<Sem> = choice!["acquire" => Sem::Acquire, "relaxed" => Sem::Relaxed];
const SCOPE: super::Choice<Scope> = choice!["cta" => Scope::Cta, "cluster" => Scope::Cluster];

ops! {
    /// `mbarrier.init`
    "ptx.mbarrier.init" ["gluon:mbarrier.init"] (bar: Barrier, count: Count) -> Unit
        = |k, call| k.mbarrier_init(bar, count);
    /// `mbarrier.inval`
    "ptx.mbarrier.inval" ["gluon:mbarrier.invalidate"] (bar: Barrier) -> Unit = |k, call| k.mbarrier_inval(bar);
    /// one arrival; returns the phase state
    "ptx.mbarrier.arrive" ["gluon:mbarrier.arrive"] (bar: Barrier) -> State
        = |k, call| k.mbarrier_arrive(bar);
    /// `count` arrivals
    "ptx.mbarrier.arrive_count" (bar: Barrier, count: Count) -> State
        = |k, call| k.mbarrier_arrive_with(bar, ArriveOpts { count: Some(count), sem: None, scope: None });
    /// arrive with `.release`/`.relaxed` and `.cta`/`.cluster`
    "ptx.mbarrier.arrive_sem" (bar: Barrier, sem: Choice(SEM_ARRIVE), scope: Choice(SCOPE)) -> State
        = |k, call| k.mbarrier_arrive_with(bar, ArriveOpts { count: None, sem: Some(sem), scope: Some(scope) });
    /// arrive and drop out of later phases
    "ptx.mbarrier.arrive_drop" (bar: Barrier) -> State = |k, call| k.mbarrier_arrive_drop(bar, ArriveOpts::default());
    /// `arrive_drop` of `count`
    "ptx.mbarrier.arrive_drop_count" (bar: Barrier, count: Count) -> State
        = |k, call| k.mbarrier_arrive_drop(bar, ArriveOpts { count: Some(count), sem: None, scope: None });
    /// the same barrier in CTA `cta` of the cluster
    "ptx.mapa" (bar: Barrier, cta: U32 = 0) -> RemoteBarrier = |k, call| k.map_barrier_to_cta(bar, cta);
    /// arrive on CTA `cta`'s copy (`mapa` + `.shared::cluster`)
    "ptx.mbarrier.arrive_remote" (bar: Barrier, cta: U32 = 0; count: Count) -> Unit
        = |k, call| k.mbarrier_arrive_on_cta(bar, cta, count);
    /// arrive on CTA `cta`'s copy where `pred` holds (CUTLASS `ClusterBarrier::arrive(cta_id, pred)`)
    "ptx.mbarrier.arrive_remote_pred" ["cutlass:ClusterBarrier::arrive"] (bar: Barrier, cta: U32 = 1, pred: Bool) -> Unit
        = |k, call| k.mbarrier_arrive_on_cta_if(bar, cta, pred);
    /// one arrival plus `tx += bytes` on a `T.ptx.mapa` barrier (`.shared::cluster`)
    "ptx.mbarrier.arrive.expect_tx_remote" ["cutlass:ClusterTransactionBarrier::arrive_and_expect_tx"] (rbar: RemoteBarrier, bytes: TxBytes) -> Unit
        = |k, call| k.mbarrier_arrive_expect_tx_remote(rbar, bytes);
    /// arrive on a `T.ptx.mapa` barrier
    "ptx.mbarrier.arrive_mapped" (rbar: RemoteBarrier; count: Count) -> Unit = |k, call| k.mbarrier_arrive_remote(rbar, count);
    /// one arrival plus `tx += bytes`
    "ptx.mbarrier.arrive.expect_tx" ["gluon:mbarrier.expect"] (bar: Barrier, bytes: TxBytes) -> State
        = |k, call| k.mbarrier_arrive_expect_tx(bar, bytes);
    /// `arrive.expect_tx` with explicit semantics and scope
    "ptx.mbarrier.arrive.expect_tx_sem" (bar: Barrier, bytes: TxBytes, sem: Choice(SEM_ARRIVE), scope: Choice(SCOPE)) -> State
        = |k, call| k.mbarrier_arrive_expect_tx_with(bar, bytes, Ordering { sem: Some(sem), scope: Some(scope) });
    /// `tx += bytes` without arriving
    "ptx.mbarrier.expect_tx" ["cutlass:ClusterTransactionBarrier::expect_transaction"] (bar: Barrier, bytes: TxBytes) -> Unit
        = |k, call| k.mbarrier_expect_tx(bar, bytes);
    /// `tx -= bytes` (what a copy engine does)
    "ptx.mbarrier.complete_tx" ["cutlass:ClusterTransactionBarrier::complete_transaction"] (bar: Barrier, bytes: TxBytes) -> Unit
        = |k, call| k.mbarrier_complete_tx(bar, bytes);
    /// `tx -= bytes` on a `T.ptx.mapa` barrier of another CTA (`.shared::cluster`, cluster scope)
    "ptx.mbarrier.complete_tx_remote" (rbar: RemoteBarrier, bytes: TxBytes) -> Unit
        = |k, call| k.mbarrier_complete_tx_remote(rbar, bytes);
    /// block until the phase with this parity completed (a `try_wait.parity` loop)
    "ptx.mbarrier.try_wait" ["gluon:mbarrier.wait", "cutlass:ClusterBarrier::wait"] (bar: Barrier, parity: Parity) -> Unit
        = |k, call| k.mbarrier_wait(bar, parity);
    /// blocking wait with `.acquire`/`.relaxed` and `.cta`/`.cluster`
    "ptx.mbarrier.try_wait_sem" (bar: Barrier, parity: Parity, sem: Choice(SEM_WAIT), scope: Choice(SCOPE)) -> Unit
        = |k, call| k.mbarrier_wait_with(bar, parity, Ordering { sem: Some(sem), scope: Some(scope) });
    /// block until the phase of an arrive's state completed
    "ptx.mbarrier.try_wait_state" (bar: Barrier, state: State) -> Unit = |k, call| k.mbarrier_wait_state(bar, state);
    /// one `try_wait.parity` attempt; true if the phase completed
    "ptx.mbarrier.try_wait_once" ["cutlass:ClusterBarrier::try_wait"] (bar: Barrier, parity: Parity; hint_ns: U32 = 1000) -> Bool
        = |k, call| k.mbarrier_try_wait_once(bar, parity, hint_ns);
    /// non-blocking `test_wait.parity`; true if the phase completed
    "ptx.mbarrier.test_wait" ["cutlass:ClusterBarrier::test_wait"] (bar: Barrier, parity: Parity) -> Bool
        = |k, call| k.mbarrier_test_wait(bar, parity);
    /// non-blocking `test_wait` on an arrive's state
    "ptx.mbarrier.test_wait_state" (bar: Barrier, state: State) -> Bool = |k, call| k.mbarrier_test_wait_state(bar, state);
    /// arrivals pending in the state's phase
    "ptx.mbarrier.pending_count" (state: State) -> U32 = |k, call| k.mbarrier_pending_count(state);
}
