//! The GPU architecture a kernel is compiled for: an identifier the IR carries. What each
//! target is (its name, ISA, limits) is `arch`'s to say.

/// The GPU architecture a kernel is compiled for. `a` targets unlock architecture-specific
/// instructions (wgmma/setmaxnreg on sm_90a, tcgen05 on sm_100a) that run only on that chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Sm80,
    Sm86,
    Sm89,
    Sm90,
    Sm90a,
    Sm100a,
}
