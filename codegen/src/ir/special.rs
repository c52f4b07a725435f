//! Special registers: thread, block and cluster coordinates.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }
    fn suffix(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// A PTX special register (read as `u32`, except the 64-bit counters: [`SpecialReg::ty`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    /// Rank of this CTA inside its cluster.
    ClusterCtaRank,
    ClusterNctaRank,
    ClusterCtaid(Dim),
    ClusterNctaid(Dim),
    Clusterid(Dim),
    /// Low 32 bits of the SM cycle counter.
    Clock,
    /// The 64-bit SM cycle counter (`%clock64`).
    Clock64,
    /// The 64-bit global nanosecond timer (`%globaltimer`).
    GlobalTimer,
}

impl SpecialReg {
    /// The type the register is read as.
    pub fn ty(self) -> super::types::Type {
        match self {
            SpecialReg::Clock64 | SpecialReg::GlobalTimer => super::types::Type::U64,
            _ => super::types::Type::U32,
        }
    }
    pub fn needs_cluster(self) -> bool {
        matches!(
            self,
            SpecialReg::ClusterCtaRank
                | SpecialReg::ClusterNctaRank
                | SpecialReg::ClusterCtaid(_)
                | SpecialReg::ClusterNctaid(_)
                | SpecialReg::Clusterid(_)
        )
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecialReg::Tid(d) => write!(f, "%tid.{}", d.suffix()),
            SpecialReg::Ntid(d) => write!(f, "%ntid.{}", d.suffix()),
            SpecialReg::Ctaid(d) => write!(f, "%ctaid.{}", d.suffix()),
            SpecialReg::Nctaid(d) => write!(f, "%nctaid.{}", d.suffix()),
            SpecialReg::LaneId => f.write_str("%laneid"),
            SpecialReg::ClusterCtaRank => f.write_str("%cluster_ctarank"),
            SpecialReg::ClusterNctaRank => f.write_str("%cluster_nctarank"),
            SpecialReg::ClusterCtaid(d) => write!(f, "%cluster_ctaid.{}", d.suffix()),
            SpecialReg::ClusterNctaid(d) => write!(f, "%cluster_nctaid.{}", d.suffix()),
            SpecialReg::Clusterid(d) => write!(f, "%clusterid.{}", d.suffix()),
            SpecialReg::Clock => f.write_str("%clock"),
            SpecialReg::Clock64 => f.write_str("%clock64"),
            SpecialReg::GlobalTimer => f.write_str("%globaltimer"),
        }
    }
}
