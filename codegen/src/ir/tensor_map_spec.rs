//! What a kernel expects of a tensor-map argument: its element type, its box and its swizzle.
//!
//! A kernel knows these at build time (declared with the parameter, or learned from the first
//! typed-tile copy that uses the map), so a map whose box, type or swizzle does not match the
//! tiles it fills is a build error or a clear launch error on both backends, never a TMA copy
//! that delivers a different number of bytes than `expect_tx` registered (a deadlock).

use super::source_loc::SourceLoc;
use super::swizzle::Swizzle;
use super::types::Type;

/// The expectation on one tensor-map parameter. Unset fields are not checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapSpec {
    pub elem: Option<Type>,
    /// The box in TMA order (innermost dimension first), as `Device::tensor_map` takes it.
    pub box_dims: Option<Vec<u32>>,
    pub swizzle: Option<Swizzle>,
    /// Whether the kernel declared it (else a tile copy implied it), and where.
    pub declared: bool,
    pub loc: Option<SourceLoc>,
}

impl TensorMapSpec {
    /// Bytes one copy of the box moves (what `expect_tx` registers for it), when the box is known.
    pub fn box_bytes(&self) -> Option<u32> {
        let elem = self.elem?.size();
        self.box_dims.as_ref().map(|b| b.iter().product::<u32>().saturating_mul(elem))
    }

    /// The box as the kernel writes shapes: outermost dimension first (`[rows, cols]`).
    pub fn box_shape(&self) -> Option<Vec<u32>> {
        self.box_dims.as_ref().map(|b| b.iter().rev().copied().collect())
    }

    /// One line for messages: `bf16, box [64, 64] (rows x cols; {64, 64} innermost first), 128-byte swizzle`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = self.elem {
            parts.push(e.to_string());
        }
        if let Some(b) = &self.box_dims {
            parts.push(describe_box(b));
        }
        if let Some(s) = self.swizzle {
            parts.push(s.name().to_string());
        }
        parts.join(", ")
    }

    /// Why a map (or a tile) of `elem`, box `box_dims` (innermost first) and `swizzle` does not
    /// match this expectation: one line per field that differs, `None` when all match.
    pub fn mismatch(&self, elem: Type, box_dims: &[u32], swizzle: Swizzle) -> Option<String> {
        let mut diffs = Vec::new();
        if let Some(e) = self.elem {
            if e.size() != elem.size() || (e != elem && !(is_raw_16(e) || is_raw_16(elem))) {
                diffs.push(format!("element type {elem}, expected {e}"));
            }
        }
        if let Some(b) = &self.box_dims {
            if !same_box(b, box_dims) {
                diffs.push(format!("{}, expected {}", describe_box(box_dims), describe_box(b)));
            }
        }
        if let Some(s) = self.swizzle {
            if s != swizzle {
                diffs.push(format!("{}, expected {}", swizzle.name(), s.name()));
            }
        }
        (!diffs.is_empty()).then(|| diffs.join("; "))
    }
}

/// 16-bit raw types move as bits (TMA's `UINT16`): a `u16` map may fill a `b16` tile.
fn is_raw_16(t: Type) -> bool {
    t == Type::B16
}

/// Boxes are equal up to trailing (outermost) dimensions of extent 1.
fn same_box(a: &[u32], b: &[u32]) -> bool {
    let n = a.len().max(b.len());
    (0..n).all(|i| a.get(i).copied().unwrap_or(1) == b.get(i).copied().unwrap_or(1))
}

/// `box [64, 32] (rows x cols; {32, 64} innermost first)` for a TMA-order box `{32, 64}`.
pub fn describe_box(tma_order: &[u32]) -> String {
    let shape: Vec<String> = tma_order.iter().rev().map(|d| d.to_string()).collect();
    let tma: Vec<String> = tma_order.iter().map(|d| d.to_string()).collect();
    let names = match tma_order.len() {
        1 => "elements",
        2 => "rows x cols",
        _ => "outermost first",
    };
    format!("box [{}] ({names}; {{{}}} innermost first)", shape.join(", "), tma.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> TensorMapSpec {
        TensorMapSpec {
            elem: Some(Type::BF16),
            box_dims: Some(vec![64, 32]),
            swizzle: Some(Swizzle::B128),
            declared: true,
            loc: None,
        }
    }

    #[test]
    fn matching_and_describing() {
        let s = spec();
        assert_eq!(s.box_bytes(), Some(64 * 32 * 2));
        assert_eq!(s.box_shape(), Some(vec![32, 64]));
        assert_eq!(s.describe(), "bf16, box [32, 64] (rows x cols; {64, 32} innermost first), 128-byte swizzle");
        assert_eq!(s.mismatch(Type::BF16, &[64, 32], Swizzle::B128), None);
        assert_eq!(s.mismatch(Type::BF16, &[64, 32, 1], Swizzle::B128), None, "outer extents of 1 do not count");
    }

    #[test]
    fn each_difference_is_named() {
        let s = spec();
        let m = s.mismatch(Type::F32, &[32, 64], Swizzle::B64).unwrap();
        assert_eq!(
            m,
            "element type f32, expected bf16; box [64, 32] (rows x cols; {32, 64} innermost first), expected \
             box [32, 64] (rows x cols; {64, 32} innermost first); 64-byte swizzle, expected 128-byte swizzle"
        );
        let partial = TensorMapSpec { elem: None, box_dims: None, swizzle: Some(Swizzle::None), ..s };
        assert_eq!(partial.mismatch(Type::F32, &[1, 2, 3], Swizzle::None), None, "unset fields are not checked");
    }
}
