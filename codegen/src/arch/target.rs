//! Compilation targets (what each is: its name, compute capability, PTX ISA) and PTX ISA
//! versions. The [`Target`] identifier itself is the IR's.

pub use crate::ir::target::Target;
use std::fmt;
use std::str::FromStr;

/// A PTX ISA version, e.g. 8.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxVersion {
    pub major: u8,
    pub minor: u8,
}

impl PtxVersion {
    pub const fn new(major: u8, minor: u8) -> Self {
        PtxVersion { major, minor }
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Target {
    pub const ALL: [Target; 6] =
        [Target::Sm80, Target::Sm86, Target::Sm89, Target::Sm90, Target::Sm90a, Target::Sm100a];

    pub fn name(self) -> &'static str {
        match self {
            Target::Sm80 => "sm_80",
            Target::Sm86 => "sm_86",
            Target::Sm89 => "sm_89",
            Target::Sm90 => "sm_90",
            Target::Sm90a => "sm_90a",
            Target::Sm100a => "sm_100a",
        }
    }
    /// Compute capability as `major * 10 + minor`.
    pub fn sm(self) -> u32 {
        match self {
            Target::Sm80 => 80,
            Target::Sm86 => 86,
            Target::Sm89 => 89,
            Target::Sm90 | Target::Sm90a => 90,
            Target::Sm100a => 100,
        }
    }
    pub fn is_arch_specific(self) -> bool {
        matches!(self, Target::Sm90a | Target::Sm100a)
    }
    /// The oldest PTX ISA that knows this target.
    pub fn min_ptx(self) -> PtxVersion {
        match self {
            Target::Sm80 => PtxVersion::new(7, 0),
            Target::Sm86 => PtxVersion::new(7, 1),
            Target::Sm89 => PtxVersion::new(7, 8),
            Target::Sm90 => PtxVersion::new(7, 8),
            Target::Sm90a => PtxVersion::new(8, 0),
            Target::Sm100a => PtxVersion::new(8, 6),
        }
    }
    /// Whether code for this target runs on a device of compute capability `cc`
    /// (`major*10+minor`). Architecture-specific code runs only on its own chip.
    pub fn runs_on(self, cc: u32) -> bool {
        if self.is_arch_specific() {
            cc == self.sm()
        } else {
            cc >= self.sm()
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown target `{s}`; expected one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a"))
    }
}
