//! Flags in global memory (`builder/flag.rs`): a release store signals a tile's round, acquire
//! loads wait for it.

use super::sync::MEM_SCOPE;

ops! {
    /// `flag[idx] = value` with `st.release.<scope>` (`.gpu` by default; `"sys"` for a peer's memory): publishes this thread's earlier writes. Signal each round with a new, larger value (the round + 1)
    "flag.signal" (flag: GlobalMut, idx: Int = 0, value: ElemOf(0) = 1; scope: Choice(MEM_SCOPE)) as U32 -> Unit
        = |k, call| k.flag_signal(flag, idx, value, scope);
    /// spin with `ld.acquire.<scope>` until `flag[idx] >= expected` (unsigned): what the signal published is visible after it
    "flag.wait" (flag: Global, idx: Int = 0, expected: ElemOf(0) = 1; scope: Choice(MEM_SCOPE)) as U32 -> Unit
        = |k, call| k.flag_wait(flag, idx, expected, scope);
}
