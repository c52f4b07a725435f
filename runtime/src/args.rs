//! Kernel arguments, and the check that they match the kernel's parameters.

use crate::buffer::Buffer;
pub use crate::device::BufferArg;
use crate::elem::Elem;
use crate::error::{Result, RuntimeError};
use crate::peer::PeerGrant;
use crate::tensor_map::TensorMap;
use phaser_codegen::ir::{Kernel, ParamKind};
use phaser_codegen::Type;

/// One launch argument.
pub enum Arg<'a> {
    /// A scalar: its PTX type and raw bits.
    Scalar {
        ty: Type,
        bits: u64,
    },
    /// A buffer: element type, length and its storage, borrowed shared or exclusive; `peer`:
    /// the peer mapping it was passed through (`crate::PeerView`), for a buffer of another
    /// device.
    Buffer {
        elem: Type,
        len: usize,
        storage: BufferArg<'a>,
        peer: Option<PeerGrant>,
    },
    TensorMap(&'a TensorMap),
}

impl<'a> Arg<'a> {
    pub fn scalar<T: Elem>(v: T) -> Arg<'a> {
        Arg::Scalar { ty: T::TYPE, bits: v.to_bits() }
    }
    /// A buffer the kernel reads: borrowed shared while the launch is in flight.
    pub fn buffer<T: Elem>(b: &'a Buffer<T>) -> Arg<'a> {
        Arg::Buffer { elem: T::TYPE, len: b.len(), storage: b.storage.as_arg(), peer: None }
    }
    /// A buffer the kernel may write: borrowed exclusively while the launch is in flight.
    pub fn buffer_mut<T: Elem>(b: &'a mut Buffer<T>) -> Arg<'a> {
        let len = b.len();
        Arg::Buffer { elem: T::TYPE, len, storage: b.storage.as_arg_mut(), peer: None }
    }
    /// What the parameter check reads of the argument.
    pub(crate) fn shape(&self) -> ArgShape<'_> {
        match self {
            Arg::Scalar { ty, .. } => ArgShape::Scalar(*ty),
            Arg::Buffer { elem, .. } => ArgShape::Buffer(*elem),
            Arg::TensorMap(t) => ArgShape::TensorMap(t),
        }
    }
}

/// An argument as the parameter check sees it: its kind and type (a buffer's storage and
/// length play no part).
pub(crate) enum ArgShape<'a> {
    Scalar(Type),
    Buffer(Type),
    TensorMap(&'a TensorMap),
}

impl ArgShape<'_> {
    fn describe(&self) -> String {
        match self {
            ArgShape::Scalar(ty) => format!("a {ty} scalar"),
            ArgShape::Buffer(elem) => format!("a buffer of {elem}"),
            ArgShape::TensorMap(_) => "a tensor map".into(),
        }
    }
}

/// An argument once the device resolved its buffer to the backend's own handle `B` (and
/// checked that the buffer is the device's): what a backend's launch takes.
pub enum ResolvedArg<'a, B> {
    Scalar { ty: Type, bits: u64 },
    Buffer(B),
    TensorMap(&'a TensorMap),
}

impl<'a, T: Elem> From<&'a Buffer<T>> for Arg<'a> {
    fn from(b: &'a Buffer<T>) -> Self {
        Arg::buffer(b)
    }
}
impl<'a, T: Elem> From<&'a mut Buffer<T>> for Arg<'a> {
    fn from(b: &'a mut Buffer<T>) -> Self {
        Arg::buffer_mut(b)
    }
}
impl<'a> From<&'a TensorMap> for Arg<'a> {
    fn from(t: &'a TensorMap) -> Self {
        Arg::TensorMap(t)
    }
}
macro_rules! scalar_from {
    ($($t:ty),*) => {$(
        impl<'a> From<$t> for Arg<'a> {
            fn from(v: $t) -> Self { Arg::scalar(v) }
        }
    )*};
}
scalar_from!(u16, u32, u64, i16, i32, i64, f32, f64, half::f16, half::bf16);

/// Check arguments against the kernel's parameter list: count, kinds and types.
pub fn check_args(k: &Kernel, args: &[Arg]) -> Result<()> {
    check_arg_shapes(k, args.iter().map(Arg::shape))
}

/// [`check_args`] on what it reads of each argument (an iterator: a launch collects nothing
/// to be checked, and nothing is formatted unless an argument is refused).
pub(crate) fn check_arg_shapes<'s>(k: &Kernel, args: impl ExactSizeIterator<Item = ArgShape<'s>>) -> Result<()> {
    if args.len() != k.params().len() {
        return Err(RuntimeError::BadArgument {
            kernel: k.name().to_owned(),
            index: args.len().min(k.params().len()),
            param: k.params().get(args.len()).map(|p| p.name.clone()).unwrap_or_else(|| "-".into()),
            problem: format!("the kernel takes {} arguments, {} were given", k.params().len(), args.len()),
        });
    }
    for (i, (p, a)) in k.params().iter().zip(args).enumerate() {
        let ok = match (&p.kind, &a) {
            (ParamKind::Scalar(t), ArgShape::Scalar(ty)) => t == ty,
            (ParamKind::Global { elem, .. }, ArgShape::Buffer(e)) => elem == e,
            (&ParamKind::TensorMap { rank }, ArgShape::TensorMap(m)) => {
                if m.desc.rank() != rank as usize {
                    return Err(RuntimeError::BadArgument {
                        kernel: k.name().to_owned(),
                        index: i,
                        param: p.name.clone(),
                        problem: format!(
                            "a rank-{} tensor map, but the kernel's TMA copies through `{}` are rank {rank} \
                             (`cp.async.bulk.tensor.{rank}d`); build the map with {rank} dimensions",
                            m.desc.rank(),
                            p.name
                        ),
                    });
                }
                if let Some(spec) = &p.tma {
                    if let Err(problem) = m.desc.check_spec(&p.name, spec) {
                        return Err(RuntimeError::BadArgument {
                            kernel: k.name().to_owned(),
                            index: i,
                            param: p.name.clone(),
                            problem,
                        });
                    }
                }
                true
            }
            _ => false,
        };
        if !ok {
            let want = match p.kind {
                ParamKind::Scalar(t) => format!("a {t} scalar"),
                ParamKind::Global { elem, .. } => format!("a buffer of {elem}"),
                ParamKind::TensorMap { rank } => format!("a rank-{rank} tensor map"),
            };
            return Err(RuntimeError::BadArgument {
                kernel: k.name().to_owned(),
                index: i,
                param: p.name.clone(),
                problem: format!("expected {want}, got {}", a.describe()),
            });
        }
    }
    Ok(())
}
