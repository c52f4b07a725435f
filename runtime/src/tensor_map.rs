//! TMA tensor maps: a backend-independent description, validated, and (CUDA) its encoded
//! 128-byte `CUtensorMap`.
//!
//! The rules checked here are those `cuTensorMapEncodeTiled` imposes (CUDA driver API,
//! "Tensor Map Object Management"), so a bad map is reported with a clear message on both
//! backends instead of as `CUDA_ERROR_INVALID_VALUE` on one of them:
//! - rank 1 to 5;
//! - global address 16-byte aligned;
//! - every dimension 1 ..= [`TMA_MAX_DIM`] elements;
//! - every byte stride (dimensions 1..) a multiple of 16 and below [`TMA_MAX_STRIDE`];
//! - every box dimension 1 ..= [`TMA_MAX_BOX_DIM`] elements; the inner box row a multiple of
//!   16 bytes;
//! - interleave none (the only layout Phaser emits), so with a swizzle the inner box row
//!   must fit the swizzle span (32, 64 or 128 bytes);
//! - element strides are all 1 (dense boxes).
//!
//! One rule is Phaser's own: a box moves at most [`MAX_TX_BYTES`] bytes, the most one
//! mbarrier phase can count (and more than any shared memory holds).
//!
//! Sizes are computed so they cannot wrap: box bytes in `u64`, the view's extent in
//! saturating `u128` (a view too large for any buffer is refused as such).

use crate::buffer::{LaunchHold, Lifeline};
use crate::error::{Result, RuntimeError};
use phaser_codegen::arch::limits::{MAX_TX_BYTES, TMA_MAX_BOX_DIM, TMA_MAX_DIM, TMA_MAX_STRIDE};
use phaser_codegen::ir::TensorMapSpec;
use phaser_codegen::Type;
use std::sync::{Arc, Weak};

/// The swizzle modes: codegen's, the one swizzle function of the project (typed tiles, wgmma
/// descriptors and the simulator's TMA all address through [`Swizzle::apply`]).
pub use phaser_codegen::arch::swizzle::Swizzle;

/// What a tensor map describes: a tiled view of a global buffer.
/// Dimension 0 is the innermost (contiguous) one.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMapDesc {
    pub dtype: Type,
    /// Global address of element (0, ..., 0).
    pub base: u64,
    /// Extent of each dimension, in elements.
    pub dims: Vec<u64>,
    /// Byte stride of dimensions 1.. (dimension 0 is contiguous).
    pub strides: Vec<u64>,
    /// The box (tile) copied per TMA op, in elements.
    pub box_dims: Vec<u32>,
    pub swizzle: Swizzle,
}

/// The rows of a TMA box in shared memory: `inner` bytes each, starting `pitch` bytes apart
/// ([`TensorMapDesc::smem_rows`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoxRows {
    pub inner: u32,
    pub pitch: u32,
}

impl BoxRows {
    /// Where byte `packed` of the box (elements in box order, rows back to back) lies in
    /// shared memory, before the swizzle.
    pub fn offset(self, packed: u32) -> u32 {
        (packed / self.inner).saturating_mul(self.pitch).saturating_add(packed % self.inner)
    }
    /// Whether rows are apart by more than their length.
    pub fn padded(self) -> bool {
        self.pitch != self.inner
    }
}

impl TensorMapDesc {
    /// A dense row-major view (`dims[0]` contiguous): strides follow from the dimensions.
    pub fn dense(dtype: Type, base: u64, dims: &[u64], box_dims: &[u32], swizzle: Swizzle) -> TensorMapDesc {
        let mut strides = Vec::new();
        let mut s = dtype.size() as u64;
        for &d in dims.iter().take(dims.len().saturating_sub(1)) {
            s = s.saturating_mul(d);
            strides.push(s);
        }
        TensorMapDesc { dtype, base, dims: dims.to_vec(), strides, box_dims: box_dims.to_vec(), swizzle }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// Bytes one TMA copy of a full box moves (what `expect_tx` must register). Boxes that
    /// hang over the tensor's edge still move (and count) the full box: out-of-bounds
    /// elements are zero-filled on loads and skipped on stores. Exact for a validated map
    /// (at most [`MAX_TX_BYTES`]); saturates at `u32::MAX` otherwise, never wraps.
    pub fn box_bytes(&self) -> u32 {
        u32::try_from(self.box_bytes_wide()).unwrap_or(u32::MAX)
    }
    /// [`TensorMapDesc::box_bytes`] in `u64` (five dimensions of 256 elements of 8 bytes are
    /// 2^43 bytes).
    pub fn box_bytes_wide(&self) -> u64 {
        self.box_dims.iter().fold(self.dtype.size() as u64, |acc, &b| acc.saturating_mul(b as u64))
    }
    /// How the box's rows lie in shared memory. A row is the inner box dimension; rows follow
    /// each other, except that a swizzled box narrower than its swizzle span takes a whole span
    /// per row: on the H200 a 16-byte-wide box with 32-byte swizzling landed at a 32-byte row
    /// pitch (`tma_boxes_land_as_the_simulator_says`, 2026-12-01). The copy still moves (and
    /// counts as tx) only [`TensorMapDesc::box_bytes`].
    pub fn smem_rows(&self) -> BoxRows {
        let inner = self.inner_row_bytes();
        let pitch = match self.swizzle.span_bytes() {
            Some(span) if inner < span => span,
            _ => inner,
        };
        BoxRows { inner, pitch }
    }
    /// Bytes of one box row (the inner box dimension times the element size; at least 1).
    pub fn inner_row_bytes(&self) -> u32 {
        self.box_dims.first().copied().unwrap_or(1).saturating_mul(self.dtype.size()).max(1)
    }
    /// Bytes of shared memory a box occupies (its rows at their pitch).
    pub fn smem_box_bytes(&self) -> u32 {
        let rows = self.smem_rows();
        (self.box_bytes() / rows.inner).saturating_mul(rows.pitch)
    }
    /// Bytes from `base` to one past the last element the view can address; saturating, so a
    /// view too large for any buffer compares as such instead of wrapping to a small size.
    pub fn extent_bytes(&self) -> u128 {
        let elem = self.dtype.size() as u128;
        let inner = self.dims.first().copied().unwrap_or(1).saturating_sub(1) as u128;
        let mut last = inner.saturating_mul(elem);
        for (i, &s) in self.strides.iter().enumerate() {
            let extent = self.dims.get(i + 1).copied().unwrap_or(1).saturating_sub(1) as u128;
            last = last.saturating_add(extent.saturating_mul(s as u128));
        }
        last.saturating_add(elem)
    }

    /// Check every rule `cuTensorMapEncodeTiled` imposes; the error names the first broken one.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(RuntimeError::TensorMap(m));
        let rank = self.dims.len();
        let ranks = phaser_codegen::arch::limits::TMA_RANKS;
        if !u8::try_from(rank).is_ok_and(|r| ranks.contains(&r)) {
            let (lo, hi) = (ranks.start(), ranks.end());
            return bad(format!("rank {rank} is not supported: a tensor map has {lo} to {hi} dimensions"));
        }
        if self.box_dims.len() != rank {
            return bad(format!("the box has {} dimensions but the tensor has {rank}", self.box_dims.len()));
        }
        if self.strides.len() != rank - 1 {
            return bad(format!(
                "{} byte strides given for a rank-{rank} tensor; give one per dimension after the first ({})",
                self.strides.len(),
                rank - 1
            ));
        }
        let elem = self.dtype.size();
        if tma_data_type(self.dtype).is_none() {
            return bad(format!("element type {} has no TMA data type", self.dtype));
        }
        if !self.base.is_multiple_of(16) {
            return bad(format!("the global address {:#x} is not 16-byte aligned", self.base));
        }
        for (i, &d) in self.dims.iter().enumerate() {
            if d == 0 || d > TMA_MAX_DIM {
                return bad(format!(
                    "dimension {i} has extent {d}; it must be in 1..=2^{}",
                    TMA_MAX_DIM.trailing_zeros()
                ));
            }
        }
        for (i, &s) in self.strides.iter().enumerate() {
            if s % 16 != 0 {
                return bad(format!("the byte stride of dimension {} is {s}, not a multiple of 16", i + 1));
            }
            if s >= TMA_MAX_STRIDE {
                return bad(format!(
                    "the byte stride of dimension {} is {s}, not below 2^{}",
                    i + 1,
                    TMA_MAX_STRIDE.trailing_zeros()
                ));
            }
        }
        for (i, &b) in self.box_dims.iter().enumerate() {
            if b == 0 || b > TMA_MAX_BOX_DIM {
                return bad(format!("box dimension {i} is {b}; it must be in 1..={TMA_MAX_BOX_DIM}"));
            }
        }
        let inner = self.inner_row_bytes();
        if !inner.is_multiple_of(16) {
            return bad(format!(
                "the inner box row is {} x {} = {inner} bytes, not a multiple of 16",
                self.box_dims[0], self.dtype
            ));
        }
        if let Some(span) = self.swizzle.span_bytes() {
            if inner > span {
                return bad(format!(
                    "the inner box row is {inner} bytes but {span}-byte swizzling allows at most {span} \
                     (shrink box dimension 0 to {} elements or use a wider swizzle)",
                    span / elem
                ));
            }
        }
        let box_bytes = self.box_bytes_wide();
        if box_bytes > MAX_TX_BYTES as u64 {
            return bad(format!(
                "the box {:?} of {} is {box_bytes} bytes, more than the {MAX_TX_BYTES} bytes one mbarrier \
                 phase can count (and than any shared memory)",
                self.box_dims, self.dtype
            ));
        }
        Ok(())
    }
}

impl TensorMapDesc {
    /// Check this map against what the kernel expects of parameter `param` (its declared or
    /// tile-implied element type, box and swizzle): a mismatch would make the TMA copies move
    /// another number of bytes than the kernel's `expect_tx` registers, or land elements
    /// where its tiles do not read them.
    pub fn check_spec(&self, param: &str, spec: &TensorMapSpec) -> std::result::Result<(), String> {
        if let Some(b) = &spec.box_dims {
            if b.len() != self.rank() && !b.iter().skip(self.rank()).all(|&d| d == 1) {
                return Err(format!(
                    "tensor map `{param}` has rank {}, but the kernel expects rank {}",
                    self.rank(),
                    b.len()
                ));
            }
        }
        match spec.mismatch(self.dtype, &self.box_dims, self.swizzle) {
            None => Ok(()),
            Some(m) => {
                let how = if spec.declared { "declares" } else { "fills tiles of" };
                let at = spec.loc.map(|l| format!(" at {l}")).unwrap_or_default();
                Err(format!(
                    "tensor map `{param}`: the map has {m}; the kernel {how} {}{at} (build the map with \
                     `Device::tensor_map(buf, dims, box innermost first, swizzle)` to match)",
                    spec.describe()
                ))
            }
        }
    }
}

/// The element types a TMA tensor map describes (`CUtensorMapDataType`; the CUDA backend
/// maps each one exhaustively, so a new one cannot fall through to a wrong encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaDataType {
    /// Bytes: FP8 moves as raw bits (the hardware has no FP8 tensor-map type on sm_90).
    U8,
    U16,
    U32,
    S32,
    U64,
    S64,
    F16,
    F32,
    F64,
    BF16,
}

/// The TMA element type of a PTX type (`None`: no TMA form).
pub fn tma_data_type(t: Type) -> Option<TmaDataType> {
    Some(match t {
        Type::U16 | Type::B16 | Type::S16 => TmaDataType::U16,
        Type::U32 | Type::B32 => TmaDataType::U32,
        Type::S32 => TmaDataType::S32,
        Type::U64 | Type::B64 => TmaDataType::U64,
        Type::S64 => TmaDataType::S64,
        Type::F16 => TmaDataType::F16,
        Type::F32 => TmaDataType::F32,
        Type::F64 => TmaDataType::F64,
        Type::BF16 => TmaDataType::BF16,
        Type::E4M3 | Type::E5M2 => TmaDataType::U8,
        Type::Pred => return None,
    })
}

/// Which device made a tensor map (its addresses mean something only there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeviceKey {
    /// A simulator, by its id.
    Sim(u64),
    /// A CUDA context, by its handle (the map's buffer keeps the context alive, so the
    /// handle is not reused while the map can be launched).
    Cuda(usize),
}

/// A tensor map ready to pass to a kernel, made by [`crate::Device::tensor_map`] (the only
/// way: the view is checked against its buffer there).
///
/// It views its buffer by address: a launch refuses the map on another device, or once the
/// buffer was dropped (see [`crate::Buffer`]).
#[derive(Clone, Debug)]
pub struct TensorMap {
    pub(crate) desc: TensorMapDesc,
    /// The encoded `CUtensorMap` (CUDA backend only).
    pub(crate) encoded: Option<[u64; 16]>,
    pub(crate) device: DeviceKey,
    pub(crate) buffer: Weak<Lifeline>,
}

impl TensorMap {
    pub(crate) fn new(
        desc: TensorMapDesc,
        encoded: Option<[u64; 16]>,
        device: DeviceKey,
        buffer: &Arc<Lifeline>,
    ) -> Self {
        TensorMap { desc, encoded, device, buffer: Arc::downgrade(buffer) }
    }
    /// What the map describes.
    pub fn desc(&self) -> &TensorMapDesc {
        &self.desc
    }
    /// The 128 bytes a kernel receives (CUDA backend only).
    pub fn encoded(&self) -> Option<&[u64; 16]> {
        self.encoded.as_ref()
    }
    /// Bytes one box moves (validated: at most [`MAX_TX_BYTES`]).
    pub fn box_bytes(&self) -> u32 {
        self.desc.box_bytes()
    }
    /// Whether the buffer the map views still exists.
    pub fn buffer_alive(&self) -> bool {
        self.buffer.upgrade().is_some_and(|l| l.hold().is_some())
    }
}

/// The tensor-map arguments of a launch on device `device`, each checked (made there, its
/// buffer alive) and held: their buffers cannot be freed until the returned holds drop.
/// The device calls this before it dispatches a launch, so both backends refuse the same maps
/// the same way.
pub(crate) fn hold_tensor_maps(
    kernel: &phaser_codegen::Kernel,
    args: &[crate::Arg],
    device: DeviceKey,
) -> Result<Vec<LaunchHold>> {
    let maps = args.iter().enumerate().filter_map(|(i, a)| match a {
        crate::Arg::TensorMap(t) => Some((i, *t)),
        crate::Arg::Scalar { .. } | crate::Arg::Buffer { .. } => None,
    });
    hold_maps(kernel, maps, device)
}

/// [`hold_tensor_maps`] for the maps of a launch, each with its argument's index.
pub(crate) fn hold_maps<'m>(
    kernel: &phaser_codegen::Kernel,
    maps: impl IntoIterator<Item = (usize, &'m TensorMap)>,
    device: DeviceKey,
) -> Result<Vec<LaunchHold>> {
    let mut holds = Vec::new();
    for (i, t) in maps {
        // Named only when refused: a launch formats nothing that succeeds.
        let param = || kernel.params().get(i).map_or_else(|| format!("#{i}"), |p| p.name.clone());
        if t.device != device {
            let backend = |k: DeviceKey| match k {
                DeviceKey::Sim(_) => crate::Backend::Sim,
                DeviceKey::Cuda(_) => crate::Backend::Cuda,
            };
            return Err(RuntimeError::ForeignTensorMap {
                param: param(),
                made_on: backend(t.device),
                device: backend(device),
            });
        }
        match t.buffer.upgrade().and_then(|l| l.hold()) {
            Some(h) => holds.push(h),
            None => return Err(RuntimeError::DroppedBuffer { param: param() }),
        }
    }
    Ok(holds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok2d() -> TensorMapDesc {
        TensorMapDesc::dense(Type::F32, 0x1000, &[1024, 512], &[256, 16], Swizzle::None)
    }

    fn err(d: &TensorMapDesc) -> String {
        d.validate().expect_err("should be rejected").to_string()
    }

    #[test]
    fn dense_strides_and_sizes() {
        let d = ok2d();
        assert_eq!(d.strides, vec![4096]);
        assert_eq!(d.box_bytes(), 256 * 16 * 4);
        assert_eq!(d.extent_bytes(), 1024 * 512 * 4);
        d.validate().unwrap();
        let d3 = TensorMapDesc::dense(Type::BF16, 0, &[64, 3, 5], &[64, 1, 1], Swizzle::B128);
        assert_eq!(d3.strides, vec![128, 384]);
        d3.validate().unwrap();
    }

    #[test]
    fn rank_limits() {
        let d = TensorMapDesc::dense(Type::F32, 0, &[4, 4, 4, 4, 4, 4], &[4, 4, 4, 4, 4, 4], Swizzle::None);
        assert!(err(&d).contains("rank 6"), "{}", err(&d));
        let mut d = ok2d();
        d.dims.clear();
        d.strides.clear();
        d.box_dims.clear();
        assert!(err(&d).contains("rank 0"));
        let mut d = ok2d();
        d.box_dims = vec![16];
        assert!(err(&d).contains("box has 1 dimensions"));
    }

    #[test]
    fn address_alignment() {
        let mut d = ok2d();
        d.base = 0x1008;
        assert!(err(&d).contains("not 16-byte aligned"), "{}", err(&d));
    }

    #[test]
    fn stride_rules() {
        let mut d = ok2d();
        d.strides = vec![4100];
        assert!(err(&d).contains("not a multiple of 16"), "{}", err(&d));
        d.strides = vec![1 << 40];
        assert!(err(&d).contains("below 2^40"), "{}", err(&d));
        // A row of 1022 f32s is 4088 bytes: not a legal stride for a dense map.
        let d = TensorMapDesc::dense(Type::F32, 0, &[1022, 4], &[256, 4], Swizzle::None);
        assert!(err(&d).contains("4088"), "{}", err(&d));
    }

    #[test]
    fn dim_rules() {
        let mut d = ok2d();
        d.dims[1] = 0;
        assert!(err(&d).contains("dimension 1 has extent 0"));
        d.dims[1] = (1 << 32) + 1;
        assert!(err(&d).contains("1..=2^32"));
        d.dims[1] = 1 << 32;
        d.validate().unwrap();
    }

    #[test]
    fn box_rules() {
        let mut d = ok2d();
        d.box_dims = vec![257, 1];
        assert!(err(&d).contains("box dimension 0 is 257"), "{}", err(&d));
        d.box_dims = vec![256, 0];
        assert!(err(&d).contains("box dimension 1 is 0"));
        d.box_dims = vec![2, 1]; // 8 bytes
        assert!(err(&d).contains("not a multiple of 16"), "{}", err(&d));
        d.box_dims = vec![4, 256];
        d.validate().unwrap();
    }

    #[test]
    fn swizzle_span() {
        let mut d = ok2d();
        d.box_dims = vec![64, 8]; // 256-byte rows
        d.swizzle = Swizzle::B128;
        assert!(err(&d).contains("128-byte swizzling allows at most 128"), "{}", err(&d));
        d.box_dims = vec![32, 8];
        d.validate().unwrap();
        d.swizzle = Swizzle::B64;
        assert!(err(&d).contains("64-byte"));
        d.box_dims = vec![16, 8];
        d.validate().unwrap();
        d.swizzle = Swizzle::B32;
        assert!(err(&d).contains("32-byte"));
        d.box_dims = vec![8, 8];
        d.validate().unwrap();
    }

    #[test]
    fn maps_are_checked_against_the_kernels_expectation() {
        use phaser_codegen::ir::TensorMapSpec;
        let spec = TensorMapSpec {
            elem: Some(Type::BF16),
            box_dims: Some(vec![64, 32]),
            swizzle: Some(Swizzle::B128),
            declared: true,
            loc: None,
        };
        let map = |dtype, b: &[u32], s| TensorMapDesc::dense(dtype, 0, &[1024, 1024], b, s);
        map(Type::BF16, &[64, 32], Swizzle::B128).check_spec("a", &spec).unwrap();
        let e = map(Type::BF16, &[32, 64], Swizzle::B128).check_spec("a", &spec).unwrap_err();
        assert_eq!(
            e,
            "tensor map `a`: the map has box [64, 32] (rows x cols; {32, 64} innermost first), expected box [32, 64] \
             (rows x cols; {64, 32} innermost first); the kernel declares bf16, box [32, 64] (rows x cols; {64, 32} \
             innermost first), 128-byte swizzle (build the map with `Device::tensor_map(buf, dims, box innermost \
             first, swizzle)` to match)"
        );
        let e = map(Type::F32, &[64, 32], Swizzle::None).check_spec("a", &spec).unwrap_err();
        assert!(e.contains("element type f32, expected bf16; no swizzle, expected 128-byte swizzle"), "{e}");
        let inferred = TensorMapSpec { declared: false, ..spec.clone() };
        let e = map(Type::BF16, &[64, 16], Swizzle::B128).check_spec("b", &inferred).unwrap_err();
        assert!(e.contains("the kernel fills tiles of bf16"), "{e}");
        let rank3 = TensorMapDesc::dense(Type::BF16, 0, &[64, 32, 4], &[64, 32, 1], Swizzle::B128);
        rank3.check_spec("a", &spec).unwrap();
    }

    #[test]
    fn dtype_codes() {
        assert_eq!(tma_data_type(Type::F32), Some(TmaDataType::F32));
        assert_eq!(tma_data_type(Type::BF16), Some(TmaDataType::BF16));
        assert_eq!(tma_data_type(Type::S16), Some(TmaDataType::U16), "16-bit integers move as raw bits");
        assert_eq!(tma_data_type(Type::E4M3), Some(TmaDataType::U8), "FP8 moves as raw bytes");
        assert_eq!(tma_data_type(Type::Pred), None);
        let d = TensorMapDesc::dense(Type::Pred, 0, &[16], &[16], Swizzle::None);
        assert!(err(&d).contains("no TMA data type"));
    }
}
