//! `cp.async.mbarrier.arrive[.noinc].shared::cta.b64 [bar]` (PTX ISA, sm_80): an arrive-on
//! operation on `bar` that the hardware triggers once every `cp.async` the executing thread
//! issued before it has completed, so a consumer can wait on the mbarrier instead of the
//! producer waiting on `cp.async.wait_group`.
//!
//! - Without `.noinc`, the barrier's pending count is incremented by one when the
//!   instruction executes and the triggered arrival decrements it again: a net-zero change
//!   for the current phase (which cannot complete before the copies land). The barrier's
//!   init count then covers only the ordinary arrivals.
//! - With `.noinc` nothing happens at issue; the triggered arrival is one of the phase's
//!   expected arrivals.
//!
//! In the simulator the arrive-on is an async op that waits for the thread's in-flight
//! `cp.async` ops (whatever their commit group) and completes, like every async op, when the
//! scheduler says. It releases the issuer's vector clock at the arrive, which covers the
//! copies' issue, so a thread that waited on the phase may read the copied bytes.

use crate::sim::agents::async_op::AsyncKind;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use phaser_codegen::ir::Value;

impl<C: Checker> Engine<'_, C> {
    /// Lane `l` of warp `wi` executes `cp.async.mbarrier.arrive[.noinc] [bar]` at `pc`.
    pub(crate) fn cp_async_arrive_issue(&mut self, wi: usize, l: usize, pc: u32, bar: &Value, noinc: bool) {
        let t = self.cluster_thread(wi, l);
        let Some((cta, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
        if !self.check_barrier_use(t, cta, off, pc, "arrives (cp.async.mbarrier.arrive) on") {
            return;
        }
        let after: Vec<u32> = self
            .async_ops
            .in_flight
            .iter()
            .filter(|o| o.issuer == t && matches!(o.kind, AsyncKind::CpAsync { .. }))
            .map(|o| o.id)
            .collect();
        if !noinc {
            self.exec.ctas[cta].barriers.get_mut(self.cx.layout, off).expect("checked barrier").pending += 1;
        }
        self.push_op(t, pc, AsyncKind::CpAsyncArrive { cta, off, after });
    }
}
