//! Flags in global memory: a producer signals a tile with a release store of a value, a
//! consumer (another CTA, cluster or, peer-mapped, device) spins with acquire loads until the
//! flag reaches it. The value is the round (epoch) the data belongs to: a flag reused for the
//! next round is signalled with a new, larger value, or a wait of the next round passes on the
//! old one and reads stale data.

use super::handles::GlobalPtr;
use super::kernel_builder::KernelBuilder;
use crate::ir::*;

impl KernelBuilder {
    /// The flag's element type must be `u32` (the loads, stores and the comparison are).
    #[track_caller]
    fn check_flag(&mut self, flag: GlobalPtr, what: &str) -> bool {
        if flag.elem != Type::U32 {
            self.error(format!("{what} takes a flag buffer of u32, found {}", flag.elem));
            return false;
        }
        true
    }

    /// `st.release.scope.global.u32 [flag + 4 idx], value`: every write of this thread before
    /// it is visible to a thread whose acquire reads `value` (order other threads' writes
    /// before it with a barrier first).
    #[track_caller]
    pub fn flag_signal(&mut self, flag: GlobalPtr, idx: Value, value: Value, scope: MemScope) {
        if self.check_flag(flag, "`flag.signal`") {
            self.st_global_ordered(flag, idx, value, MemOrder { sem: AtomSem::Release, scope });
        }
    }

    /// Spin until `flag[idx] >= expected` with `ld.acquire.scope.global.u32` (unsigned): the
    /// writes the signalling thread published are visible after it. The wait watchdog guards
    /// the loop as it guards mbarrier waits.
    #[track_caller]
    pub fn flag_wait(&mut self, flag: GlobalPtr, idx: Value, expected: Value, scope: MemScope) {
        if !self.check_flag(flag, "`flag.wait`") {
            return;
        }
        // Every op of the loop, the watchdog's marks included, at the caller's line (the line
        // the watchdog's report names).
        self.at_caller(|k| k.flag_wait_loop(flag, idx, expected, scope));
    }

    fn flag_wait_loop(&mut self, flag: GlobalPtr, idx: Value, expected: Value, scope: MemScope) {
        let expected = if expected.ty() == Type::U32 { expected } else { self.cvt(expected, Type::U32) };
        let index = if idx.ty() == Type::U32 { idx } else { self.cvt(idx, Type::U32) };
        // The wait watchdog's counters (`ir::FlagSpin`): a flag nobody signals traps with the
        // flag named instead of hanging the GPU.
        let (spins, started) = (self.new_reg(Type::U32), self.new_reg(Type::U64));
        self.push(Inst::FlagSpin(FlagSpin::Start { spins, started }));
        let seen = std::cell::Cell::new(None);
        self.while_(
            |k| {
                let v = k.ld_global_ordered(flag, idx, MemOrder { sem: AtomSem::Acquire, scope });
                seen.set(Some(v));
                k.lt(v, expected)
            },
            |k| {
                let seen = seen.get().expect("the condition is built before the body");
                k.push(Inst::FlagSpin(FlagSpin::Try { base: flag.addr, index, expected, seen, spins, started }));
            },
        );
    }
}
