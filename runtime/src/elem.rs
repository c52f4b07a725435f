//! Element types that can live in buffers and be passed as scalars.

use phaser_codegen::Type;

/// A plain-old-data element with a PTX type; cudarc's marker traits let the CUDA backend
/// hold it in a typed `CudaSlice<T>`.
pub trait Elem:
    Copy + Default + Send + Sync + 'static + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits
{
    const TYPE: Type;
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! elem_int {
    ($($t:ty => $ty:ident),*) => {$(
        impl Elem for $t {
            const TYPE: Type = Type::$ty;
            fn to_bits(self) -> u64 { self as u64 }
            fn from_bits(bits: u64) -> Self { bits as $t }
        }
    )*};
}
elem_int!(u16 => U16, u32 => U32, u64 => U64, i16 => S16, i32 => S32, i64 => S64);

impl Elem for f32 {
    const TYPE: Type = Type::F32;
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}
impl Elem for f64 {
    const TYPE: Type = Type::F64;
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
impl Elem for half::f16 {
    const TYPE: Type = Type::F16;
    fn to_bits(self) -> u64 {
        half::f16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        half::f16::from_bits(bits as u16)
    }
}
impl Elem for half::bf16 {
    const TYPE: Type = Type::BF16;
    fn to_bits(self) -> u64 {
        half::bf16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        half::bf16::from_bits(bits as u16)
    }
}

/// Little-endian bytes of a slice of elements.
pub fn to_bytes<T: Elem>(data: &[T]) -> Vec<u8> {
    let size = T::TYPE.size() as usize;
    let mut out = Vec::with_capacity(data.len() * size);
    for &x in data {
        out.extend_from_slice(&x.to_bits().to_le_bytes()[..size]);
    }
    out
}

/// Elements from little-endian bytes.
pub fn from_bytes<T: Elem>(bytes: &[u8]) -> Vec<T> {
    let size = T::TYPE.size() as usize;
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            T::from_bits(u64::from_le_bytes(b))
        })
        .collect()
}
