//! Warp specialization: role branches by warp or warpgroup, single-thread issue with
//! `elect.sync`, and `setmaxnreg` register rebalancing between warpgroup roles (sm_90a).

use super::kernel_builder::KernelBuilder;
use crate::arch::limits::{
    MAX_REGISTERS_PER_THREAD, REGISTERS_PER_SM, SETMAXNREG_MAX, SETMAXNREG_MIN, SETMAXNREG_STEP,
};
use crate::ir::*;

/// How a block splits into producer and consumer warpgroups (128 threads each; producers
/// first: warpgroups `0..producers` produce, the rest consume), and optionally how
/// registers move between them with `setmaxnreg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpgroupRoles {
    pub producer_warpgroups: u32,
    pub consumer_warpgroups: u32,
    /// `setmaxnreg.dec` target of producer warpgroups and `setmaxnreg.inc` target of
    /// consumer warpgroups (`arch::limits::setmaxnreg_problem` says which counts), or `None`
    /// for no rebalancing.
    pub regs: Option<(u32, u32)>,
}

impl WarpgroupRoles {
    /// CUTLASS's usual split: producers drop to 40 registers, consumers take what is left.
    pub fn rebalanced(producer_warpgroups: u32, consumer_warpgroups: u32) -> WarpgroupRoles {
        let p = 40;
        // Saturating: a split too large for an SM is reported by `warpgroup_roles`.
        let left = REGISTERS_PER_SM.saturating_sub(producer_warpgroups.saturating_mul(128 * p));
        let c = (left / consumer_warpgroups.max(1).saturating_mul(128) / SETMAXNREG_STEP * SETMAXNREG_STEP)
            .clamp(SETMAXNREG_MIN, SETMAXNREG_MAX);
        WarpgroupRoles { producer_warpgroups, consumer_warpgroups, regs: Some((p, c)) }
    }
    /// Threads per block (saturating at `u32::MAX`, which no block shape matches).
    pub fn threads(&self) -> u32 {
        self.producer_warpgroups.saturating_add(self.consumer_warpgroups).saturating_mul(128)
    }
}

/// The per-thread register cap at kernel entry for a block of `threads` threads at one
/// block per SM (what `__launch_bounds__(threads, 1)` gives): a multiple of 8.
pub fn entry_register_cap(threads: u32) -> u32 {
    (REGISTERS_PER_SM / threads.max(1) / 8 * 8).clamp(SETMAXNREG_MIN, MAX_REGISTERS_PER_THREAD) / 8 * 8
}

impl KernelBuilder {
    /// `if elect.sync() { body }`: exactly one lane of the converged warp runs `body`.
    /// Every lane of the warp must reach the call.
    #[track_caller]
    pub fn elect_one(&mut self, body: impl FnOnce(&mut Self)) {
        let p = self.at_caller(|k| k.elect_sync());
        self.if_then(p, body);
    }

    /// `if warp_idx() == warp { body }` (1-D blocks).
    #[track_caller]
    pub fn if_warp(&mut self, warp: u32, body: impl FnOnce(&mut Self)) {
        let c = self.at_caller(|k| {
            let w = k.warp_idx();
            k.eq(w, Value::u32(warp))
        });
        self.if_then(c, body);
    }

    /// `if lane_idx() == 0 { body }`: a fixed lane (unlike `elect_one`, always the same
    /// thread, which matters for per-thread state such as bulk async-groups).
    #[track_caller]
    pub fn if_lane0(&mut self, body: impl FnOnce(&mut Self)) {
        let c = self.at_caller(|k| {
            let l = k.lane_idx();
            k.eq(l, Value::u32(0))
        });
        self.if_then(c, body);
    }

    /// Split the block into producer and consumer warpgroups: one `if/else` on
    /// `warpgroup_idx() < producers` whose branches start with `setmaxnreg.dec` /
    /// `setmaxnreg.inc` when `roles.regs` is set. `consumer` receives the consumer warpgroup
    /// index (`0..consumer_warpgroups`).
    ///
    /// `setmaxnreg` is honoured only when ptxas knows the register count at entry (else it
    /// warns C7508 and ignores it): the block shape must be declared (`require_block`) as
    /// exactly `roles.threads()` threads, and the kernel gets `.maxnreg` set to the
    /// one-block-per-SM cap unless one was set already.
    #[track_caller]
    pub fn warpgroup_roles(
        &mut self,
        roles: WarpgroupRoles,
        producer: impl FnOnce(&mut Self),
        consumer: impl FnOnce(&mut Self, Value),
    ) {
        if roles.producer_warpgroups == 0 || roles.consumer_warpgroups == 0 {
            self.error("warpgroup roles need at least one producer and one consumer warpgroup");
        }
        if let Some((p, c)) = roles.regs {
            match self.declared_block() {
                Some(b) if b[0] as u64 == roles.threads() as u64 && b[1] == 1 && b[2] == 1 => {}
                other => self.error(format!(
                    "setmaxnreg role split of {} threads needs `require_block({}, 1, 1)`, found {:?}",
                    roles.threads(),
                    roles.threads(),
                    other
                )),
            }
            let cap = self.bounds.maxnreg.unwrap_or_else(|| entry_register_cap(roles.threads()));
            if self.bounds.maxnreg.is_none() {
                self.bounds.maxnreg = Some(cap);
            }
            if p > cap {
                self.error(format!("setmaxnreg.dec to {p} registers is above the entry cap of {cap}"));
            }
            if c < cap {
                self.error(format!("setmaxnreg.inc to {c} registers is below the entry cap of {cap}"));
            }
            let total =
                roles.producer_warpgroups as u64 * 128 * p as u64 + roles.consumer_warpgroups as u64 * 128 * c as u64;
            if total > REGISTERS_PER_SM as u64 {
                self.error(format!(
                    "the role split needs {total} registers ({} producer warpgroups x 128 x {p} + {} consumer \
                     warpgroups x 128 x {c}), more than the {REGISTERS_PER_SM} of an SM",
                    roles.producer_warpgroups, roles.consumer_warpgroups
                ));
            }
        }
        let loc = self.here();
        let saved = self.loc_override;
        self.loc_override = Some(loc);
        let wg = self.warpgroup_idx();
        let is_producer = self.lt(wg, Value::u32(roles.producer_warpgroups));
        let regs = roles.regs;
        let first_consumer = roles.producer_warpgroups;
        self.if_else(
            is_producer,
            |k| {
                if let Some((p, _)) = regs {
                    k.setmaxnreg(false, p);
                }
                k.loc_override = saved;
                producer(k);
            },
            |k| {
                k.loc_override = Some(loc);
                if let Some((_, c)) = regs {
                    k.setmaxnreg(true, c);
                }
                let cw = k.sub(wg, Value::u32(first_consumer));
                k.loc_override = saved;
                consumer(k, cw);
            },
        );
        self.loc_override = saved;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;
    use crate::ptx_text::{has, has_directive, instructions};

    #[test]
    fn entry_caps() {
        assert_eq!(entry_register_cap(384), 168);
        assert_eq!(entry_register_cap(256), 248);
        assert_eq!(entry_register_cap(128), 248);
        assert_eq!(entry_register_cap(1024), 64);
        let r = WarpgroupRoles::rebalanced(1, 2);
        assert_eq!(r.regs, Some((40, 232)));
        assert_eq!(r.threads(), 384);
    }

    #[test]
    fn roles_emit_one_if_else_with_setmaxnreg() {
        let mut k = KernelBuilder::new("ws", Target::Sm90a);
        k.require_block(384, 1, 1);
        k.warpgroup_roles(
            WarpgroupRoles::rebalanced(1, 2),
            |k| k.elect_one(|k| k.probe("producer", &[])),
            |k, wg| k.probe("consumer", &[wg]),
        );
        let k = k.finish().unwrap();
        assert_eq!(k.bounds().maxnreg, Some(168));
        let ptx = emit_kernel(&k).unwrap();
        let insts = instructions(&ptx);
        let dec = insts.iter().position(|i| i.matches("setmaxnreg.dec.sync.aligned.u32 40")).unwrap();
        let inc = insts.iter().position(|i| i.matches("setmaxnreg.inc.sync.aligned.u32 232")).unwrap();
        assert!(dec < inc);
        assert!(has_directive(&ptx, ".maxnreg 168"));
        assert!(has(&ptx, "shr.u32 %r*, %r*, 7"), "warpgroup = tid.x >> 7:\n{ptx}");
        assert!(has(&ptx, "elect.sync _|%p*, 0xffffffff"), "{ptx}");
    }

    #[test]
    fn roles_need_a_declared_block_and_fitting_registers() {
        let mut k = KernelBuilder::new("ws", Target::Sm90a);
        k.warpgroup_roles(WarpgroupRoles::rebalanced(1, 2), |_| {}, |_, _| {});
        let e = k.finish().unwrap_err();
        assert!(e.first_message().contains("require_block(384, 1, 1)"), "{e}");

        let mut k = KernelBuilder::new("ws", Target::Sm90a);
        k.require_block(384, 1, 1);
        k.warpgroup_roles(
            WarpgroupRoles { producer_warpgroups: 1, consumer_warpgroups: 2, regs: Some((40, 256)) },
            |_| {},
            |_, _| {},
        );
        let e = k.finish().unwrap_err();
        assert!(e.first_message().contains("more than the 65536"), "{e}");

        // setmaxnreg is sm_90a-only: plain sm_90 is refused by the ISA check.
        let mut k = KernelBuilder::new("ws", Target::Sm90);
        k.require_block(384, 1, 1);
        k.warpgroup_roles(WarpgroupRoles::rebalanced(1, 2), |_| {}, |_, _| {});
        let e = k.finish().unwrap_err();
        assert!(e.first_message().contains("setmaxnreg"), "{e}");
    }

    #[test]
    fn roles_without_rebalancing() {
        let mut k = KernelBuilder::new("ws", Target::Sm90);
        k.require_block(256, 1, 1);
        k.warpgroup_roles(
            WarpgroupRoles { producer_warpgroups: 1, consumer_warpgroups: 1, regs: None },
            |k| k.if_lane0(|k| k.probe("p", &[])),
            |k, _| k.if_warp(4, |k| k.warp_sync()),
        );
        let k = k.finish().unwrap();
        assert_eq!(k.bounds().maxnreg, None);
        let ptx = emit_kernel(&k).unwrap();
        assert!(!ptx.contains("setmaxnreg"));
        assert!(has(&ptx, "bar.warp.sync 0xffffffff"), "{ptx}");
    }

    #[test]
    fn aligned_shared_allocation() {
        let mut k = KernelBuilder::new("al", Target::Sm90a);
        let a = k.alloc_shared_aligned("tile", Type::F32, 256, 1024);
        let b = k.shared_base_addr(a);
        k.probe("b", &[b]);
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        assert!(has_directive(&ptx, ".shared .align 1024 .f32 smem_tile[256];"), "{ptx}");
        let mut k = KernelBuilder::new("al", Target::Sm90a);
        k.alloc_shared_aligned("tile", Type::F32, 256, 100);
        assert!(k.finish().is_err());
    }
}
