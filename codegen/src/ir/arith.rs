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
    /// Type conversion; the printer picks the rounding PTX requires.
    Cvt {
        dst: Reg,
        src: Value,
    },
}
