//! Thread, block, warp and cluster coordinates.

use super::kernel_builder::KernelBuilder;
use crate::ir::*;

impl KernelBuilder {
    #[track_caller]
    pub fn special(&mut self, sreg: SpecialReg) -> Value {
        let dst = self.new_reg(sreg.ty());
        self.push(Inst::ReadSpecial { dst, sreg });
        Value::Reg(dst)
    }
    #[track_caller]
    pub fn thread_idx(&mut self, d: Dim) -> Value {
        self.special(SpecialReg::Tid(d))
    }
    #[track_caller]
    pub fn block_dim(&mut self, d: Dim) -> Value {
        self.special(SpecialReg::Ntid(d))
    }
    #[track_caller]
    pub fn block_idx(&mut self, d: Dim) -> Value {
        self.special(SpecialReg::Ctaid(d))
    }
    #[track_caller]
    pub fn grid_dim(&mut self, d: Dim) -> Value {
        self.special(SpecialReg::Nctaid(d))
    }
    #[track_caller]
    pub fn lane_idx(&mut self) -> Value {
        self.special(SpecialReg::LaneId)
    }
    /// Warp index within a 1-D block: `tid.x / 32`.
    #[track_caller]
    pub fn warp_idx(&mut self) -> Value {
        let t = self.thread_idx(Dim::X);
        self.shr(t, Value::u32(5))
    }
    /// Warpgroup (4 consecutive warps) index within a 1-D block: `tid.x / 128`.
    #[track_caller]
    pub fn warpgroup_idx(&mut self) -> Value {
        let t = self.thread_idx(Dim::X);
        self.shr(t, Value::u32(7))
    }
    /// `%cluster_ctaid.{x,y,z}`: this CTA's coordinates in its cluster.
    #[track_caller]
    pub fn cluster_ctaid(&mut self, d: Dim) -> Value {
        self.special(SpecialReg::ClusterCtaid(d))
    }
    #[track_caller]
    pub fn cluster_cta_rank(&mut self) -> Value {
        self.special(SpecialReg::ClusterCtaRank)
    }
    /// `%clock64`: the SM's cycle counter.
    #[track_caller]
    pub fn clock64(&mut self) -> Value {
        self.special(SpecialReg::Clock64)
    }
    /// `%globaltimer`: a nanosecond timer shared by the GPU.
    #[track_caller]
    pub fn globaltimer(&mut self) -> Value {
        self.special(SpecialReg::GlobalTimer)
    }
    #[track_caller]
    pub fn cluster_size(&mut self) -> Value {
        self.special(SpecialReg::ClusterNctaRank)
    }
}
