//! Arithmetic, comparison, selection and conversion ops.

use super::value::{Reg, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    Abs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    /// Low half of the product for integers, the product for floats.
    Mul,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

impl BinOp {
    /// How Rust (and the DSL) spells the operator, for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }

    pub fn is_commutative(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max | BinOp::And | BinOp::Or | BinOp::Xor)
    }
}

/// Float functions of one operand with PTX's own semantics (`.approx` forms are not
/// correctly rounded: the evaluator's model and its error bound are in `eval::math`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// `ex2.approx.ftz.f32`: 2^x.
    Ex2Approx,
    /// `lg2.approx.ftz.f32`: log2(x).
    Lg2Approx,
    /// `rcp.approx.ftz.f32`: 1/x.
    RcpApprox,
    /// `rcp.rn.{f32,f64}`: 1/x, correctly rounded.
    RcpRn,
    /// `rsqrt.approx.ftz.f32`: 1/sqrt(x).
    RsqrtApprox,
    /// `sqrt.approx.ftz.f32`.
    SqrtApprox,
    /// `sqrt.rn.{f32,f64}`: correctly rounded.
    SqrtRn,
}

impl MathFn {
    pub const ALL: [MathFn; 7] = [
        MathFn::Ex2Approx,
        MathFn::Lg2Approx,
        MathFn::RcpApprox,
        MathFn::RcpRn,
        MathFn::RsqrtApprox,
        MathFn::SqrtApprox,
        MathFn::SqrtRn,
    ];

    /// The PTX instruction without its type (`ex2.approx.ftz`).
    pub fn ptx(self) -> &'static str {
        match self {
            MathFn::Ex2Approx => "ex2.approx.ftz",
            MathFn::Lg2Approx => "lg2.approx.ftz",
            MathFn::RcpApprox => "rcp.approx.ftz",
            MathFn::RcpRn => "rcp.rn",
            MathFn::RsqrtApprox => "rsqrt.approx.ftz",
            MathFn::SqrtApprox => "sqrt.approx.ftz",
            MathFn::SqrtRn => "sqrt.rn",
        }
    }

    /// The PTX instruction of the packed form on two `half`s (f16 or bf16) in one `b32`,
    /// type included (`ex2.approx.f16x2`); `None` where PTX has no such form (only `ex2`
    /// has one: PTX ISA, "Half Precision Floating Point Instructions: ex2"). The f16 form
    /// takes no `.ftz` (it keeps subnormals), the bf16 form exists only with it.
    pub fn half2_ptx(self, half: super::Type) -> Option<&'static str> {
        match (self, half) {
            (MathFn::Ex2Approx, super::Type::F16) => Some("ex2.approx.f16x2"),
            (MathFn::Ex2Approx, super::Type::BF16) => Some("ex2.approx.ftz.bf16x2"),
            (
                MathFn::Ex2Approx
                | MathFn::Lg2Approx
                | MathFn::RcpApprox
                | MathFn::RcpRn
                | MathFn::RsqrtApprox
                | MathFn::SqrtApprox
                | MathFn::SqrtRn,
                _,
            ) => None,
        }
    }

    /// Whether PTX has the f64 form too (the `.approx` ones are f32 only).
    pub fn has_f64(self) -> bool {
        match self {
            MathFn::RcpRn | MathFn::SqrtRn => true,
            MathFn::Ex2Approx | MathFn::Lg2Approx | MathFn::RcpApprox | MathFn::RsqrtApprox | MathFn::SqrtApprox => {
                false
            }
        }
    }
}

/// Float operations of two operands that are not operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatBinOp {
    /// `min.NaN`: a NaN operand makes the result NaN (plain `min` returns the other operand).
    MinNaN,
    /// `max.NaN`.
    MaxNaN,
    /// Rust's `a.copysign(b)`: `a`'s magnitude with `b`'s sign (PTX's `copysign d, b, a`
    /// takes its operands the other way around; the printer swaps them).
    Copysign,
}

impl FloatBinOp {
    pub const ALL: [FloatBinOp; 3] = [FloatBinOp::MinNaN, FloatBinOp::MaxNaN, FloatBinOp::Copysign];
}

/// The rounding of a conversion: PTX spells it `.rn .rz .rm .rp` into a float and
/// `.rni .rzi .rmi .rpi` into an integer (or a float rounded to an integral value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// To nearest, ties to even.
    Nearest,
    /// Toward zero.
    Zero,
    /// Toward minus infinity.
    Down,
    /// Toward plus infinity.
    Up,
}

impl Rounding {
    pub const ALL: [Rounding; 4] = [Rounding::Nearest, Rounding::Zero, Rounding::Down, Rounding::Up];

    /// The rounding a plain `as` conversion from `from` to `to` uses, `None` where the
    /// conversion is exact and PTX takes no rounding modifier: to nearest into a float (a
    /// narrowing or an integer source), toward zero into an integer from a float, as Rust.
    pub fn of_cast(from: super::Type, to: super::Type) -> Option<Rounding> {
        match (to.is_float(), from.is_float()) {
            (true, false) => Some(Rounding::Nearest),
            (false, true) => Some(Rounding::Zero),
            (true, true) if to.size() < from.size() => Some(Rounding::Nearest),
            _ => None,
        }
    }

    /// Whether a conversion from `from` to `to` takes a rounding: one that rounds (see
    /// [`Rounding::of_cast`]), or a float rounded to an integral value of its own type.
    pub fn applies(from: super::Type, to: super::Type) -> bool {
        Rounding::of_cast(from, to).is_some() || (from == to && from.is_float())
    }

    /// Whether the result is an integral value (`.rni` and friends): an integer
    /// destination, or a float rounded to an integer of the same float type.
    pub fn integral(from: super::Type, to: super::Type) -> bool {
        !to.is_float() || from == to
    }

    /// The PTX modifier (`.rn`, `.rzi`, ..).
    pub fn modifier(self, integral: bool) -> &'static str {
        match (self, integral) {
            (Rounding::Nearest, false) => ".rn",
            (Rounding::Zero, false) => ".rz",
            (Rounding::Down, false) => ".rm",
            (Rounding::Up, false) => ".rp",
            (Rounding::Nearest, true) => ".rni",
            (Rounding::Zero, true) => ".rzi",
            (Rounding::Down, true) => ".rmi",
            (Rounding::Up, true) => ".rpi",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ArithOp {
    Mov {
        dst: Reg,
        src: Value,
    },
    Unary {
        op: UnOp,
        dst: Reg,
        a: Value,
    },
    Binary {
        op: BinOp,
        dst: Reg,
        a: Value,
        b: Value,
    },
    /// `dst = a * b + c` (fused for floats, `mad.lo` for integers).
    Mad {
        dst: Reg,
        a: Value,
        b: Value,
        c: Value,
    },
    /// `dst (pred) = a <cmp> b`.
    Setp {
        cmp: CmpOp,
        dst: Reg,
        a: Value,
        b: Value,
    },
    /// `dst = cond ? a : b`.
    Selp {
        dst: Reg,
        cond: Value,
        a: Value,
        b: Value,
    },
    /// Type conversion with `rounding` (`None`: a plain `as`, [`Rounding::of_cast`]).
    Cvt {
        dst: Reg,
        src: Value,
        rounding: Option<Rounding>,
    },
    /// A float function of one operand (`ex2`, `rcp`, `sqrt`, ..).
    Math {
        fun: MathFn,
        dst: Reg,
        a: Value,
    },
    /// A float function on each 16-bit half of a `b32` holding a pair of `half`s (f16 or
    /// bf16; the low half is element 0), `dst` and `a` `b32` registers
    /// ([`MathFn::half2_ptx`]: `ex2.approx.f16x2`).
    MathHalf2 {
        fun: MathFn,
        half: super::Type,
        dst: Reg,
        a: Value,
    },
    /// `min.NaN`, `max.NaN`, `copysign`.
    FloatBinary {
        op: FloatBinOp,
        dst: Reg,
        a: Value,
        b: Value,
    },
    /// The same bits as another type of the same width (`mov.b32`: `f32::from_bits`,
    /// `x.to_bits()`).
    Bitcast {
        dst: Reg,
        src: Value,
    },
}
