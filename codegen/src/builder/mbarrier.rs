//! `T.ptx.mbarrier.*`: builder methods for every mbarrier form.

use super::handles::*;
use super::kernel_builder::KernelBuilder;
use crate::arch::parity;
use crate::ir::*;

/// Options of an arrive: arrival count, memory semantics, scope.
#[derive(Clone, Copy, Debug, Default)]
pub struct ArriveOpts {
    pub count: Option<Value>,
    pub sem: Option<Sem>,
    pub scope: Option<Scope>,
}

impl KernelBuilder {
    /// `bars.ptr_to([idx])`: the address of barrier `idx` of the array.
    #[track_caller]
    pub fn barrier_at(&mut self, bars: BarrierArray, idx: Value) -> Barrier {
        if let Some(i) = idx.as_imm_i128() {
            if i < 0 || i >= bars.len as i128 {
                self.error(format!("barrier index {i} is out of bounds for a barrier array of {} barriers", bars.len));
            }
        }
        let base = self.new_reg(Type::U32);
        self.push(MemoryOp::SharedAddr { dst: base, alloc: bars.alloc });
        let off = match idx.as_imm_i128() {
            Some(i) => Value::u32((i as u32).wrapping_mul(8)),
            None => {
                let i = self.cvt(idx, Type::U32);
                self.shl(i, Value::u32(3))
            }
        };
        Barrier { addr: self.add(Value::Reg(base), off) }
    }

    /// Treat a 32-bit shared address as a barrier (it must be 8-byte aligned).
    #[track_caller]
    pub fn barrier_from_shared_addr(&mut self, addr: Value) -> Barrier {
        if !matches!(addr.ty(), Type::U32 | Type::B32) {
            self.error(format!("a barrier address must be a 32-bit shared address, found {}", addr.ty()));
        }
        Barrier { addr }
    }

    /// A 32-bit count operand. A constant is range-checked as given (a 64-bit `2^32 + 1` is
    /// refused, not truncated to 1 before the mbarrier range check sees it).
    #[track_caller]
    fn count_operand(&mut self, what: &str, v: Value) -> Value {
        match v {
            Value::Imm { .. } => match v.as_imm_i128() {
                Some(x) if !(0..=u32::MAX as i128).contains(&x) => {
                    self.error(format!("{what} {x} does not fit in u32"));
                    Value::u32(0)
                }
                _ => super::arith::retype_imm(v, Type::U32),
            },
            Value::Reg(r) if r.ty.is_int() && r.ty.size() == 4 => v,
            _ => {
                self.error(format!("{what} must be a 32-bit integer, found {}", v.ty()));
                v
            }
        }
    }

    /// `T.ptx.mbarrier.init(bar, count)`.
    #[track_caller]
    pub fn mbarrier_init(&mut self, bar: Barrier, count: Value) {
        let count = self.count_operand("arrival count", count);
        self.push(MbarrierOp::Init { bar: bar.addr, count });
    }

    /// `T.ptx.mbarrier.inval(bar)`.
    #[track_caller]
    pub fn mbarrier_inval(&mut self, bar: Barrier) {
        self.push(MbarrierOp::Inval { bar: bar.addr });
    }

    /// `T.ptx.mbarrier.arrive(bar)`: one arrival; returns the phase state token.
    #[track_caller]
    pub fn mbarrier_arrive(&mut self, bar: Barrier) -> Value {
        self.mbarrier_arrive_with(bar, ArriveOpts::default())
    }

    #[track_caller]
    pub fn mbarrier_arrive_with(&mut self, bar: Barrier, opts: ArriveOpts) -> Value {
        self.arrive_impl(bar, opts, false)
    }

    /// One arrival without a state token (`mbarrier.arrive.shared::cta.b64 _, [bar]`, what
    /// CuTe's `arrive_barrier` emits).
    #[track_caller]
    pub fn mbarrier_arrive_discard(&mut self, bar: Barrier) {
        let order = Ordering::default();
        self.push(MbarrierOp::Arrive {
            bar: bar.addr,
            count: None,
            order,
            space: BarSpace::Cta,
            state: None,
            drop: false,
        });
    }

    /// One arrival plus `tx += bytes`, without a state token (CuTe's
    /// `set_barrier_transaction_bytes`).
    #[track_caller]
    pub fn mbarrier_arrive_expect_tx_discard(&mut self, bar: Barrier, bytes: Value) {
        let bytes = self.count_operand("tx byte count", bytes);
        let order = Ordering::default();
        self.push(MbarrierOp::ArriveExpectTx { bar: bar.addr, bytes, order, space: BarSpace::Cta, state: None });
    }

    /// `T.ptx.mbarrier.arrive_drop(bar)`: arrive and lower the expected count from the next phase on.
    #[track_caller]
    pub fn mbarrier_arrive_drop(&mut self, bar: Barrier, opts: ArriveOpts) -> Value {
        self.arrive_impl(bar, opts, true)
    }

    #[track_caller]
    fn arrive_impl(&mut self, bar: Barrier, opts: ArriveOpts, drop: bool) -> Value {
        let count = opts.count.map(|c| self.count_operand("arrive count", c));
        let state = self.new_reg(Type::B64);
        let order = Ordering { sem: opts.sem, scope: opts.scope };
        self.check_arrive_sem(order);
        self.push(MbarrierOp::Arrive { bar: bar.addr, count, order, space: BarSpace::Cta, state: Some(state), drop });
        Value::Reg(state)
    }

    #[track_caller]
    fn check_arrive_sem(&mut self, order: Ordering) {
        if order.sem == Some(Sem::Acquire) {
            self.error("an arrive has `.release` or `.relaxed` semantics, not `.acquire`");
        }
    }

    #[track_caller]
    fn check_wait_sem(&mut self, order: Ordering) {
        if order.sem == Some(Sem::Release) {
            self.error("a wait has `.acquire` or `.relaxed` semantics, not `.release`");
        }
    }

    /// The cluster address of `bar` in CTA `cta` of the cluster (`mapa`).
    #[track_caller]
    pub fn map_barrier_to_cta(&mut self, bar: Barrier, cta: Value) -> RemoteBarrier {
        let cta = self.count_operand("CTA rank", cta);
        let dst = self.new_reg(Type::U32);
        self.push(SyncOp::Mapa { dst, addr: bar.addr, cta });
        RemoteBarrier { addr: Value::Reg(dst) }
    }

    /// Arrive on a barrier of another CTA in the cluster (`.shared::cluster`, release.cluster).
    #[track_caller]
    pub fn mbarrier_arrive_remote(&mut self, bar: RemoteBarrier, count: Option<Value>) {
        let order = Ordering { sem: Some(Sem::Release), scope: Some(Scope::Cluster) };
        self.mbarrier_arrive_remote_with(bar, count, order);
    }

    /// A remote arrive with explicit ordering. `Ordering::default()` prints CUTLASS's
    /// `ClusterBarrier::arrive(cta_id)` form (`mbarrier.arrive.shared::cluster.b64`, release
    /// at CTA scope): enough to hand a stage back whose reads have completed, and without the
    /// `MEMBAR.ALL.GPU` that `.release.cluster` costs in SASS.
    #[track_caller]
    pub fn mbarrier_arrive_remote_with(&mut self, bar: RemoteBarrier, count: Option<Value>, order: Ordering) {
        let count = count.map(|c| self.count_operand("arrive count", c));
        self.check_arrive_sem(order);
        self.push(MbarrierOp::Arrive {
            bar: bar.addr,
            count,
            order,
            space: BarSpace::Cluster,
            state: None,
            drop: false,
        });
    }

    /// Arrive on `bar`'s copy in CTA `cta` of the cluster (`mapa` + a remote arrive).
    #[track_caller]
    pub fn mbarrier_arrive_on_cta(&mut self, bar: Barrier, cta: Value, count: Option<Value>) {
        let remote = self.map_barrier_to_cta(bar, cta);
        self.mbarrier_arrive_remote(remote, count);
    }

    /// CUTLASS's `ClusterBarrier::arrive(cta_id, pred)`: arrive on `bar`'s copy in CTA `cta`
    /// only where `pred` holds (the `mapa` and the arrive are both predicated).
    #[track_caller]
    pub fn mbarrier_arrive_on_cta_if(&mut self, bar: Barrier, cta: Value, pred: Value) {
        self.at_caller(|k| {
            k.if_then(pred, |k| {
                let remote = k.map_barrier_to_cta(bar, cta);
                k.mbarrier_arrive_remote_with(remote, None, Ordering::default());
            })
        })
    }

    /// `mbarrier.arrive.expect_tx.shared::cluster`: one arrival plus `tx += bytes` on a
    /// barrier of (another) CTA of the cluster, e.g. before copying into that CTA
    /// (`cp.async.bulk.shared::cluster.shared::cta`).
    #[track_caller]
    pub fn mbarrier_arrive_expect_tx_remote(&mut self, bar: RemoteBarrier, bytes: Value) {
        let bytes = self.count_operand("tx byte count", bytes);
        self.push(MbarrierOp::ArriveExpectTx {
            bar: bar.addr,
            bytes,
            order: Ordering::default(),
            space: BarSpace::Cluster,
            state: None,
        });
    }

    /// `T.ptx.mbarrier.arrive.expect_tx(bar, bytes)`: one arrival plus `tx += bytes`.
    #[track_caller]
    pub fn mbarrier_arrive_expect_tx(&mut self, bar: Barrier, bytes: Value) -> Value {
        self.mbarrier_arrive_expect_tx_with(bar, bytes, Ordering::default())
    }

    #[track_caller]
    pub fn mbarrier_arrive_expect_tx_with(&mut self, bar: Barrier, bytes: Value, order: Ordering) -> Value {
        let bytes = self.count_operand("tx byte count", bytes);
        self.check_arrive_sem(order);
        let state = self.new_reg(Type::B64);
        self.push(MbarrierOp::ArriveExpectTx { bar: bar.addr, bytes, order, space: BarSpace::Cta, state: Some(state) });
        Value::Reg(state)
    }

    /// `T.ptx.mbarrier.expect_tx(bar, bytes)`: `tx += bytes` without arriving.
    #[track_caller]
    pub fn mbarrier_expect_tx(&mut self, bar: Barrier, bytes: Value) {
        let bytes = self.count_operand("tx byte count", bytes);
        self.push(MbarrierOp::ExpectTx { bar: bar.addr, bytes, scope: Scope::Cta, space: BarSpace::Cta });
    }

    /// `T.ptx.mbarrier.complete_tx(bar, bytes)`: `tx -= bytes`, as a copy engine would.
    #[track_caller]
    pub fn mbarrier_complete_tx(&mut self, bar: Barrier, bytes: Value) {
        let bytes = self.count_operand("tx byte count", bytes);
        self.push(MbarrierOp::CompleteTx { bar: bar.addr, bytes, scope: Scope::Cta, space: BarSpace::Cta });
    }

    /// `tx -= bytes` on a barrier of another CTA of the cluster (a `T.ptx.mapa` barrier,
    /// `.shared::cluster` at cluster scope: CUTLASS's `complete_transaction(dst_cta, bytes)`).
    #[track_caller]
    pub fn mbarrier_complete_tx_remote(&mut self, bar: RemoteBarrier, bytes: Value) {
        let bytes = self.count_operand("tx byte count", bytes);
        self.push(MbarrierOp::CompleteTx { bar: bar.addr, bytes, scope: Scope::Cluster, space: BarSpace::Cluster });
    }

    #[track_caller]
    fn parity_operand(&mut self, parity: Value) -> Value {
        match parity {
            // A register by its type; an immediate by its value, whatever its integer width.
            _ if !(parity::type_ok(parity.ty()) || matches!(parity, Value::Imm { .. }) && parity.ty().is_int()) => {
                self.error(format!("{} must be a {}, found {}", parity::WHAT, parity::FORMS, parity.ty()));
                parity
            }
            Value::Imm { .. } => match parity.as_imm_i128().and_then(parity::value_problem) {
                Some(why) => {
                    self.error(why);
                    Value::u32(0)
                }
                None => super::arith::retype_imm(parity, Type::U32),
            },
            Value::Reg(r) if r.ty == Type::Pred => self.select(parity, Value::u32(1), Value::u32(0)),
            Value::Reg(_) => parity,
        }
    }

    /// `T.ptx.mbarrier.try_wait(bar, parity)`: block until the phase with this parity completed.
    #[track_caller]
    pub fn mbarrier_wait(&mut self, bar: Barrier, parity: Value) {
        self.mbarrier_wait_with(bar, parity, Ordering::default());
    }

    #[track_caller]
    pub fn mbarrier_wait_with(&mut self, bar: Barrier, parity: Value, order: Ordering) {
        let p = self.parity_operand(parity);
        self.check_wait_sem(order);
        self.push(MbarrierOp::Wait { bar: bar.addr, on: WaitOn::Parity(p), order });
    }

    /// Block until the phase of `state` (from an arrive) completed.
    #[track_caller]
    pub fn mbarrier_wait_state(&mut self, bar: Barrier, state: Value) {
        self.push(MbarrierOp::Wait { bar: bar.addr, on: WaitOn::State(state), order: Ordering::default() });
    }

    /// `T.ptx.mbarrier.try_wait_once(bar, parity[, hint_ns])`: one attempt; true if complete.
    #[track_caller]
    pub fn mbarrier_try_wait_once(&mut self, bar: Barrier, parity: Value, hint: Option<Value>) -> Value {
        let p = self.parity_operand(parity);
        let hint = hint.map(|h| self.count_operand("suspend-time hint", h));
        let done = self.new_reg(Type::Pred);
        self.push(MbarrierOp::TryWait { done, bar: bar.addr, on: WaitOn::Parity(p), hint, order: Ordering::default() });
        Value::Reg(done)
    }

    /// `T.ptx.mbarrier.test_wait(bar, parity)`: non-blocking; true if the phase completed.
    #[track_caller]
    pub fn mbarrier_test_wait(&mut self, bar: Barrier, parity: Value) -> Value {
        let p = self.parity_operand(parity);
        let done = self.new_reg(Type::Pred);
        self.push(MbarrierOp::TestWait { done, bar: bar.addr, on: WaitOn::Parity(p), order: Ordering::default() });
        Value::Reg(done)
    }

    /// `T.ptx.mbarrier.test_wait` on a state token from an arrive.
    #[track_caller]
    pub fn mbarrier_test_wait_state(&mut self, bar: Barrier, state: Value) -> Value {
        let done = self.new_reg(Type::Pred);
        self.push(MbarrierOp::TestWait { done, bar: bar.addr, on: WaitOn::State(state), order: Ordering::default() });
        Value::Reg(done)
    }

    /// `T.ptx.mbarrier.pending_count(state)`: arrivals still pending in the state's phase.
    #[track_caller]
    pub fn mbarrier_pending_count(&mut self, state: Value) -> Value {
        if state.ty() != Type::B64 {
            self.error(format!("pending_count takes the b64 state returned by an arrive, found {}", state.ty()));
        }
        let dst = self.new_reg(Type::U32);
        self.push(MbarrierOp::PendingCount { dst, state });
        Value::Reg(dst)
    }
}
