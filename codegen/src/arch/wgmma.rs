//! The wgmma facts, each in one place: the shapes of `wgmma.mma_async` (PTX ISA 9.7.15.5.1
//! "Matrix Shape": M = 64, N a multiple of 8 in 8..=256, K per multiplicand type), the D
//! fragment's registers, which multiplicand types pair and which may be transposed, and how
//! the operand tiles and the k-step must fit the shape. The builder, `check_kernel` and the
//! DSL's checker ask here, so each rule has one message; the DSL asks with what the macro
//! knows ([`Call`]'s `Option`s), the builder with everything known when the kernel is built.

use crate::ir::{Major, MmaElem, Type};

/// Rows of A and of the accumulator: one warpgroup's 64.
pub const M: u32 = 64;
/// N comes in steps of this many columns.
pub const N_STEP: u32 = 8;
/// The widest N.
pub const MAX_N: u32 = 256;
/// Threads of the warpgroup that issues a wgmma and holds its accumulator.
pub const WARPGROUP_THREADS: u32 = 128;

impl MmaElem {
    /// The K of one instruction for this multiplicand type (PTX ISA "Matrix Shape"): 16 for
    /// f16/bf16 and 32 for e4m3/e5m2, 32 bytes of K either way. (The ISA's other types, not
    /// emitted yet: tf32 8, s8/u8 32, b1 256.)
    pub const fn k(self) -> u32 {
        match self {
            MmaElem::F16 | MmaElem::BF16 => 16,
            MmaElem::E4M3 | MmaElem::E5M2 => 32,
        }
    }
}

/// The multiplicand type of tiles of `ty` that wgmma reads through descriptors, if it has one:
/// bf16, f16 and the FP8 types (the tile element types kernels have).
pub fn tile_elem(ty: Type) -> Option<MmaElem> {
    match ty {
        Type::BF16 => Some(MmaElem::BF16),
        Type::F16 => Some(MmaElem::F16),
        Type::E4M3 => Some(MmaElem::E4M3),
        Type::E5M2 => Some(MmaElem::E5M2),
        _ => None,
    }
}

/// What [`tile_elem`] takes, for messages.
pub const TILE_ELEMS: &str = "bf16, f16, e4m3 or e5m2";

/// f32 registers per thread of an `M x n` accumulator (the D fragment): `n / 2`.
pub const fn accumulator_len(n: u32) -> u32 {
    n * M / WARPGROUP_THREADS
}

/// The N of an accumulator of `len` f32 registers per thread: `2 len`.
pub const fn accumulator_n(len: u32) -> u32 {
    len * WARPGROUP_THREADS / M
}

/// The N rule, when `n` breaks it.
pub fn n_problem(n: u32) -> Option<String> {
    let ok = (N_STEP..=MAX_N).contains(&n) && n.is_multiple_of(N_STEP);
    (!ok).then(|| format!("N must be a multiple of {N_STEP} in {N_STEP}..={MAX_N}"))
}

/// Why an accumulator of `len` f32 registers per thread is not one of a wgmma, if it is not.
pub fn accumulator_problem(len: u32) -> Option<String> {
    let n = accumulator_n(len);
    n_problem(n).map(|rule| {
        format!(
            "an accumulator of {len} f32 registers is {M} x {n}, but {rule}: `T.registers::<f32>([N / 2])` with N / 2 \
             a multiple of {} in {}..={}",
            accumulator_len(N_STEP),
            accumulator_len(N_STEP),
            accumulator_len(MAX_N)
        )
    })
}

/// Why `a` and `b` cannot be multiplied together, if they cannot.
pub fn types_problem(a: MmaElem, b: MmaElem) -> Option<String> {
    let ok = if a.is_fp8() { b.is_fp8() } else { a == b };
    (!ok).then(|| {
        format!(
            "wgmma multiplies {} by {}: 16-bit operands must have the same type, FP8 operands pair with FP8",
            a.ptx(),
            b.ptx()
        )
    })
}

/// Why an operand of `elem` cannot lie `major` in shared memory, if it cannot: transposes
/// (`imm-trans`) exist only for 16-bit types.
pub fn major_problem(elem: MmaElem, major: Major) -> Option<&'static str> {
    (major == Major::MN && elem.is_fp8()).then_some("MN-major (transposed) wgmma operands exist only for f16/bf16")
}

/// Why an A fragment from registers cannot be `major`, if it cannot.
pub fn register_a_major_problem(major: Major) -> Option<&'static str> {
    (major == Major::MN).then_some("A from registers is K-major by definition (no `imm-trans-a`)")
}

/// The arguments of one `mma_async` a rule can be broken by, so each problem is reported at
/// its own argument (the names are the DSL's parameters: `T.ptx.wgmma.mma_async(acc, a, b,
/// k_step, ..)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    Acc,
    A,
    B,
    KStep,
}

impl Arg {
    /// The parameter's name in the op registry (and the DSL).
    pub fn name(self) -> &'static str {
        match self {
            Arg::Acc => "acc",
            Arg::A => "a",
            Arg::B => "b",
            Arg::KStep => "k_step",
        }
    }
}

/// A multiplicand tile as far as it is known: its extents (`None` where unknown) and how it
/// lies, and how to name it in messages (`` `b` `` in the DSL, its shape in the builder).
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// Extents outermost first; a tile of rank 3 or more is its outer dimensions flattened
    /// into rows (a `[2, 64, 64]` stage is a `[128, 64]` operand).
    pub shape: Vec<Option<u32>>,
    pub major: Major,
    pub name: String,
}

impl Operand {
    /// (M or N, K): the rows and columns of the tile, swapped when it is MN-major.
    pub fn extents(&self) -> (Option<u32>, Option<u32>) {
        let (outer, inner) = self.shape.split_at(self.shape.len().saturating_sub(1));
        let rows = outer.iter().try_fold(1u32, |a, d| d.and_then(|d| a.checked_mul(d)));
        let cols = inner.first().copied().flatten();
        match self.major {
            Major::K => (rows, cols),
            Major::MN => (cols, rows),
        }
    }
}

/// One `mma_async` as far as it is known: the accumulator's length (f32 registers per
/// thread) and name, A's tile (`None` for A from registers), B's tile, the k-step and the
/// multiplicand type.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub acc_len: Option<u32>,
    pub acc_name: String,
    pub a: Option<Operand>,
    pub b: Option<Operand>,
    pub k_step: Option<u32>,
    pub elem: Option<MmaElem>,
}

/// The fix of [`Arg::A`]'s row problem.
pub const A_ROWS_HELP: &str = "pass one warpgroup's 64-row slab (`a[i]` of a `[.., 64, K]` tile)";

/// The shape rules a call breaks, each with the argument that breaks it and, where there is
/// one, its fix. A rule whose sizes are unknown is not judged.
pub fn shape_problems(c: &Call) -> Vec<(Arg, String, Option<&'static str>)> {
    let mut out = Vec::new();
    let named = |n: &str| if n.is_empty() { String::new() } else { format!("{n} ") };
    // An accumulator of no wgmma's N is not compared with B (one mistake, one message).
    let acc_n = match c.acc_len.map(|len| (len, accumulator_problem(len))) {
        Some((_, Some(p))) => {
            out.push((Arg::Acc, p, None));
            None
        }
        Some((len, None)) => Some(accumulator_n(len)),
        None => None,
    };
    let (b_n, b_k) = c.b.as_ref().map(Operand::extents).unwrap_or((None, None));
    if let (Some(n), Some(bn), Some(b)) = (acc_n, b_n, &c.b) {
        if n != bn {
            out.push((
                Arg::Acc,
                format!(
                    "the accumulator {}is {M} x {n} (`T.registers::<f32>([{}])`), but B {}is {bn} wide in N: the \
                     accumulator of this B is `T.registers::<f32>([{}])`",
                    named(&c.acc_name),
                    accumulator_len(n),
                    named(&b.name),
                    accumulator_len(bn)
                ),
                None,
            ));
        }
    }
    let (a_m, a_k) = c.a.as_ref().map(Operand::extents).unwrap_or((None, None));
    if let (Some(m), Some(a)) = (a_m, &c.a) {
        if m != M {
            out.push((
                Arg::A,
                format!("an m{M} wgmma multiplies {M} rows of A, but {} has {m}", a.name),
                Some(A_ROWS_HELP),
            ));
        }
    }
    if let (Some(ak), Some(bk)) = (a_k, b_k) {
        if ak != bk {
            out.push((Arg::B, format!("A is {ak} wide in K but B is {bk}"), None));
        }
    }
    if let (Some(step), Some(k), Some(elem)) = (c.k_step, b_k, c.elem) {
        let kk = elem.k();
        let steps = k / kk;
        if step >= steps {
            out.push((
                Arg::KStep,
                format!("k-step {step} is past the tiles' K of {k} ({steps} steps of {kk}: 0..{steps})"),
                None,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tile(shape: &[u32], major: Major, name: &str) -> Operand {
        Operand { shape: shape.iter().map(|&d| Some(d)).collect(), major, name: name.into() }
    }

    fn call(acc_len: u32, a: &[u32], b: &[u32], k_step: u32) -> Call {
        Call {
            acc_len: Some(acc_len),
            acc_name: "`acc`".into(),
            a: Some(tile(a, Major::K, "`a`")),
            b: Some(tile(b, Major::K, "`b`")),
            k_step: Some(k_step),
            elem: Some(MmaElem::BF16),
        }
    }

    #[test]
    fn k_per_type_follows_the_isa() {
        assert_eq!([MmaElem::F16, MmaElem::BF16, MmaElem::E4M3, MmaElem::E5M2].map(MmaElem::k), [16, 16, 32, 32]);
        for e in [MmaElem::F16, MmaElem::BF16, MmaElem::E4M3, MmaElem::E5M2] {
            assert_eq!(e.k() * e.bytes(), 32, "{e:?}: 32 bytes of K");
        }
    }

    #[test]
    fn a_well_formed_call_has_no_problems() {
        assert_eq!(shape_problems(&call(64, &[64, 64], &[128, 64], 3)), vec![]);
        // A [2, 64, 64] stage of B is 128 rows.
        assert_eq!(shape_problems(&call(64, &[64, 64], &[2, 64, 64], 0)), vec![]);
    }

    #[test]
    fn each_broken_rule_is_reported_at_its_argument() {
        let p = shape_problems(&call(32, &[128, 64], &[128, 32], 4));
        let args: Vec<Arg> = p.iter().map(|x| x.0).collect();
        assert_eq!(args, [Arg::Acc, Arg::A, Arg::B, Arg::KStep]);
        assert_eq!(
            p[0].1,
            "the accumulator `acc` is 64 x 64 (`T.registers::<f32>([32])`), but B `b` is 128 wide in N: the \
             accumulator of this B is `T.registers::<f32>([64])`"
        );
        assert_eq!(p[1].1, "an m64 wgmma multiplies 64 rows of A, but `a` has 128");
        assert_eq!(p[1].2, Some(A_ROWS_HELP));
        assert_eq!(p[2].1, "A is 64 wide in K but B is 32");
        assert_eq!(p[3].1, "k-step 4 is past the tiles' K of 32 (2 steps of 16: 0..2)");
        let bad_n = shape_problems(&Call { b: None, ..call(132, &[64, 64], &[64, 64], 0) });
        assert_eq!(
            bad_n,
            vec![(
                Arg::Acc,
                "an accumulator of 132 f32 registers is 64 x 264, but N must be a multiple of 8 in 8..=256: \
                 `T.registers::<f32>([N / 2])` with N / 2 a multiple of 4 in 4..=128"
                    .to_string(),
                None
            )]
        );
    }

    #[test]
    fn unknown_sizes_are_not_judged() {
        let unknown = Call { acc_len: None, acc_name: String::new(), a: None, b: None, k_step: None, elem: None };
        assert_eq!(shape_problems(&unknown), vec![]);
        let mut c = call(32, &[128, 64], &[64, 64], 9);
        c.a.as_mut().unwrap().shape[0] = None;
        c.elem = None;
        assert_eq!(shape_problems(&c), vec![], "A's rows and the k-step's K per step are unknown");
        // MN-major B: [K, N].
        let mut c = call(64, &[64, 64], &[64, 128], 3);
        c.b.as_mut().unwrap().major = Major::MN;
        assert_eq!(shape_problems(&c), vec![]);
    }

    #[test]
    fn types_and_transposes() {
        assert_eq!(types_problem(MmaElem::BF16, MmaElem::BF16), None);
        assert_eq!(types_problem(MmaElem::E4M3, MmaElem::E5M2), None);
        assert!(types_problem(MmaElem::F16, MmaElem::BF16).unwrap().contains("same type"));
        assert!(types_problem(MmaElem::E4M3, MmaElem::BF16).unwrap().contains("FP8 operands pair with FP8"));
        assert_eq!(major_problem(MmaElem::BF16, Major::MN), None);
        assert!(major_problem(MmaElem::E4M3, Major::MN).is_some());
        assert_eq!(major_problem(MmaElem::E4M3, Major::K), None);
        assert!(register_a_major_problem(Major::MN).is_some());
        assert_eq!(tile_elem(Type::F32), None);
        assert_eq!(tile_elem(Type::E4M3), Some(MmaElem::E4M3));
        assert_eq!(tile_elem(Type::E5M2), Some(MmaElem::E5M2));
    }

    proptest! {
        /// The N rule holds exactly for the multiples of 8 in 8..=256, and the accumulator
        /// length and N convert into each other.
        #[test]
        fn n_rule(n in 0u32..600) {
            prop_assert_eq!(n_problem(n).is_none(), n % 8 == 0 && (8..=256).contains(&n));
            prop_assert_eq!(accumulator_n(accumulator_len(2 * n)), 2 * n);
            prop_assert_eq!(accumulator_problem(n).is_none(), n_problem(2 * n).is_none());
        }
    }
}
