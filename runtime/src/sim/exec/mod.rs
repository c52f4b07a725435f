//! Instructions other than arithmetic and control flow (the slow path): dispatch to
//! `memory`, `mbarrier`, `sync`, `warp` (warp collectives and fragments), `tma`, `wgmma`,
//! `tcgen05`; `printf` and probes here.

pub(crate) mod mbarrier;
pub(crate) mod memory;
pub(crate) mod sync;
pub(crate) mod tcgen05;
pub(crate) mod tma;
pub(crate) mod warp;
pub(crate) mod wgmma;

use crate::error::Result;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::warp::lanes;
use phaser_codegen::ir::*;

impl<C: Checker> Engine<'_, C> {
    pub(crate) fn exec_slow(&mut self, wi: usize, mask: u32, pc: u32, inst: &Inst) -> Result<()> {
        match inst {
            Inst::Memory(op) => self.exec_memory(wi, mask, pc, op),
            Inst::Mbarrier(op) => {
                if !self.exec_mbarrier_warp(wi, mask, pc, op) {
                    for l in lanes(mask) {
                        self.exec_mbarrier(wi, l, pc, op);
                        if self.abort {
                            break;
                        }
                    }
                }
            }
            Inst::Sync(op) => self.exec_sync(wi, mask, pc, op),
            Inst::Warp(op) => self.exec_warp(wi, mask, pc, op),
            Inst::Fragment(op) => self.exec_fragment(wi, mask, pc, op),
            Inst::Printf(p) => self.exec_printf(wi, mask, p),
            Inst::Tma(op) => {
                for l in lanes(mask) {
                    self.exec_tma(wi, l, pc, op);
                    if self.abort {
                        break;
                    }
                }
            }
            Inst::Tcgen05(op) => self.exec_tcgen05(wi, mask, pc, op),
            Inst::Probe { tag, values } => {
                for l in lanes(mask) {
                    let vals: Vec<(u64, Type)> = values.iter().map(|v| (self.val(wi, l, v), v.ty())).collect();
                    let t = self.cluster_thread(wi, l) % self.exec.threads_per_cta;
                    let ctaid = self.exec.ctas[self.exec.warps[wi].cta].ctaid;
                    self.out.probe(tag, ctaid, t, self.time.tick, vals, self.cx.config.max_probes);
                }
            }
            // The tensor core (`exec_wgmma.rs`).
            Inst::Wgmma(op) => self.exec_wgmma(wi, mask, pc, op),
            // Not simulated: a clear finding that stops the run.
            Inst::Asm(_) => {
                let msg = "unsupported op: inline PTX (`T.asm`) is not run by the simulator, which cannot know what \
                           it does (run the kernel on the GPU)";
                let l = lanes(mask).next().unwrap_or(0);
                let t = self.cluster_thread(wi, l);
                let cta = self.exec.warps[wi].cta;
                self.finding(crate::report::finding::Category::Unsupported, cta, Some(t), None, Some(pc), msg.into());
                self.abort = true;
            }
            // Lowered to fast ops.
            Inst::Arith(_) | Inst::ReadSpecial { .. } => unreachable!("fast op in the slow path"),
            Inst::FlagSpin(_) => unreachable!("the program lowers a flag wait's watchdog marks to nothing"),
        }
        Ok(())
    }
}
