//! CuTe's mbarrier API (`cute/arch/copy_sm90_desc.hpp`), under the names users of the seed
//! lesson know, with CuTe's semantics: each is one PTX instruction (the caller elects the
//! thread that initializes; `arrive_barrier` and `set_barrier_transaction_bytes` return
//! nothing; `wait_barrier` blocks on the phase parity).

ops! {
    /// `mbarrier.init`: `count` arrivals per phase (call it from one thread, then synchronize)
    "cute.initialize_barrier" ["cute:initialize_barrier"] (bar: Barrier, count: Count) -> Unit
        = |k, call| k.mbarrier_init(bar, count);
    /// `mbarrier.arrive.expect_tx`: one arrival plus `tx += bytes` (before a TMA load completing on `bar`)
    "cute.set_barrier_transaction_bytes" ["cute:set_barrier_transaction_bytes"] (bar: Barrier, bytes: TxBytes) -> Unit
        = |k, call| k.mbarrier_arrive_expect_tx_discard(bar, bytes);
    /// `mbarrier.arrive`: one arrival
    "cute.arrive_barrier" ["cute:arrive_barrier"] (bar: Barrier) -> Unit = |k, call| k.mbarrier_arrive_discard(bar);
    /// block until the phase with parity `phase` completed (a `try_wait.parity` loop)
    "cute.wait_barrier" ["cute:wait_barrier"] (bar: Barrier, phase: Parity) -> Unit = |k, call| k.mbarrier_wait(bar, phase);
}
