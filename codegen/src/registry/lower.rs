//! Using an entry: lowering a call into a kernel, and lowering it with sample arguments to
//! learn what it needs from a target (the DSL's compile-time check, the docs, the ptxas
//! matrix). What an op needs is never written down twice: it is what the instructions its
//! lowering emits need ([`requirement`]).

use super::args::{FromOpOut, OpArg, OpArgs, OpOut};
use super::def::{Kind, OpDef};
use crate::arch::check::{check_kernel, ops_ptx, value_problems};
use crate::arch::isa::{requirement, Requirement};
use crate::arch::{PtxVersion, Target};
use crate::builder::{Arrivals, KernelBuilder, PipelineConfig, PipelineState, RemoteBarrier, TileLayout, TileShape};
use crate::ir::{walk_insts, Kernel, Space, Type, Value};

/// Lower the op at `path` into `k` with evaluated `args` (one per parameter, `Absent` for
/// an omitted optional one), the `::<T>` type and the `let` name. A call the registry does
/// not accept is a build error on `k`, never a panic.
#[track_caller]
pub fn call(k: &mut KernelBuilder, path: &str, args: Vec<OpArg>, elem: Option<Type>, name: &str) -> OpOut {
    let out = match super::lookup(path) {
        Some(def) => lower(k, def, args, elem, name),
        None => {
            k.error(format!("internal error: the op registry has no `T.{path}`"));
            OpOut::Invalid
        }
    };
    // The argument locations were this call's.
    k.clear_arg_locs();
    out
}

/// [`call`], returning the handle the caller expects (a mismatch is a build error). The
/// arguments come as an array, moved in whole: the DSL's expansion calls this once per op,
/// and building the `Vec` here keeps the allocation and its clean-up out of the caller.
#[track_caller]
pub fn call_as<R: FromOpOut, const N: usize>(
    k: &mut KernelBuilder,
    path: &str,
    args: [OpArg; N],
    elem: Option<Type>,
    name: &str,
) -> R {
    call(k, path, Vec::from(args), elem, name).into_handle(k, path)
}

#[track_caller]
fn lower(k: &mut KernelBuilder, def: &OpDef, args: Vec<OpArg>, elem: Option<Type>, name: &str) -> OpOut {
    if let Some(problem) = mismatch(def, &args, elem) {
        k.error(format!("internal error: `{}` {problem}", def.signature()));
        return OpOut::Invalid;
    }
    let mut call = OpArgs::new(args, elem, name);
    let out = (def.lower)(k, &mut call);
    for p in std::mem::take(&mut call.problems) {
        k.error(format!("internal error: `T.{}`: {p}", def.path));
    }
    out
}

/// Why `args` do not fit `def`'s parameters, if they do not.
fn mismatch(def: &OpDef, args: &[OpArg], elem: Option<Type>) -> Option<String> {
    if args.len() != def.params.len() {
        return Some(format!("got {} arguments", args.len()));
    }
    if def.turbofish != elem.is_some() {
        return Some(if def.turbofish { "needs an element type".into() } else { "takes no element type".into() });
    }
    def.params.iter().zip(args).enumerate().find_map(|(i, (p, a))| {
        (!a.fits(p.kind, def.is_optional(i))).then(|| format!("got {a:?} for `{}` ({:?})", p.name, p.kind))
    })
}

/// What is known about one argument when an op is lowered without real values.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgHint {
    /// Nothing beyond the parameter's kind: a register of its default type, or a fresh handle.
    Any,
    /// A runtime value of this IR type (a register).
    Reg(Type),
    /// An integer literal (an immediate of the type, when given).
    Literal(i128, Option<Type>),
    /// A buffer or shared array of this element type.
    Elem(Type),
    /// An array (`Array`/`ArrayMut`) in this space (`SharedCluster`: another CTA's shared
    /// array) of this element type.
    InSpace(Space, Type),
    /// A string literal (`Tag`): the format or template itself.
    Tag(&'static str),
    /// A tensor map of this rank.
    Rank(u8),
    /// `Coords` / `Values`: one register of each type.
    List(Vec<Type>),
    /// A compile-time value.
    Const(u32),
    /// A compile-time shape.
    Dims(Vec<u32>),
    /// The chosen option of a `Choice`.
    Choice(&'static str),
    /// An omitted optional argument.
    Absent,
}

/// Make the arguments of a call of `def` from `hints` (one per parameter): registers are
/// kernel parameters, handles are allocated as a kernel would.
pub fn sample_args(k: &mut KernelBuilder, def: &OpDef, hints: &[ArgHint]) -> Vec<OpArg> {
    let sample_elem = def.sample_elem.unwrap_or(Type::F32);
    let elem_of = |h: &ArgHint| match h {
        ArgHint::Elem(t) | ArgHint::InSpace(_, t) => *t,
        _ => sample_elem,
    };
    def.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let hint = hints.get(i).cloned().unwrap_or(ArgHint::Any);
            // Unique among the kernel's parameters (several calls may share a kernel).
            let pname = k.fresh_param_name(&format!("{}{i}", p.name));
            match (p.kind, hint) {
                (_, ArgHint::Absent) => OpArg::Absent,
                (Kind::Barrier, _) => {
                    let bars = k.alloc_barriers(&pname, 1);
                    OpArg::Barrier(k.barrier_at(bars, Value::u32(0)))
                }
                (Kind::RemoteBarrier, _) => OpArg::RemoteBarrier(RemoteBarrier { addr: k.param(&pname, Type::U32) }),
                (Kind::Pipeline, _) => OpArg::Pipeline(k.pipeline(&pname, PipelineConfig::tma(2, Arrivals::Warps(1)))),
                (Kind::PipelineState, _) => OpArg::PipelineState(PipelineState::new(k, 2, 0)),
                (Kind::Shared, h) => OpArg::Shared(k.alloc_shared(&pname, elem_of(&h), 256)),
                // `&[T]` where any buffer does (`ld.nc` refuses a writable one), `&mut [T]` where
                // the op writes.
                (Kind::Global, h) => OpArg::Global(k.param_global(&pname, elem_of(&h), false)),
                (Kind::GlobalMut, h) => OpArg::Global(k.param_global(&pname, elem_of(&h), true)),
                (Kind::RemoteShared, h) => {
                    let s = k.alloc_shared(&pname, elem_of(&h), 256);
                    OpArg::RemoteShared(k.map_shared_to_cta(s, Value::u32(1)))
                }
                (Kind::Array | Kind::ArrayMut, h) => {
                    let space = if let ArgHint::InSpace(s, _) = h { s } else { Space::Global };
                    match space {
                        Space::Global => OpArg::Global(k.param_global(&pname, elem_of(&h), true)),
                        Space::Shared => OpArg::Shared(k.alloc_shared(&pname, elem_of(&h), 256)),
                        Space::SharedCluster => {
                            let s = k.alloc_shared(&pname, elem_of(&h), 256);
                            OpArg::RemoteShared(k.map_shared_to_cta(s, Value::u32(1)))
                        }
                    }
                }
                (Kind::Places, h) => {
                    let tys = if let ArgHint::List(t) = h { t } else { vec![Type::U32] };
                    OpArg::Values(tys.iter().map(|&t| Value::Reg(k.new_reg(t))).collect())
                }
                (Kind::TensorMap, h) => {
                    let rank = if let ArgHint::Rank(r) = h { r } else { 2 };
                    OpArg::TensorMap(k.param_tensor_map(&pname, rank))
                }
                (Kind::Tile, h) => {
                    OpArg::Tile(k.alloc_tile(&pname, &TileShape::new(elem_of(&h), &[8, 64], TileLayout::RowMajor)))
                }
                // A valid operand of every wgmma form: 64 rows of one 128-byte swizzle row, 128-byte
                // swizzled: 64 x 64 bf16 (or f16; K-major and MN-major views alike have M/N = K =
                // 64), 64 x 128 FP8 (K-major only).
                (Kind::MmaTile, h) => {
                    let elem = match elem_of(&h) {
                        t if crate::arch::wgmma::tile_elem(t).is_some() => t,
                        _ => Type::BF16,
                    };
                    let swizzle = crate::arch::swizzle::Swizzle::B128;
                    let dims = [64, swizzle.row_bytes() / elem.size()];
                    OpArg::Tile(k.alloc_tile(&pname, &TileShape::new(elem, &dims, TileLayout::Swizzled(swizzle))))
                }
                (Kind::Registers(t), h) => {
                    let len = match h {
                        ArgHint::Dims(d) => d.iter().product(),
                        _ => p.sample.map(|s| s as u32).unwrap_or(4),
                    };
                    OpArg::Registers(k.alloc_registers(t, &[len]))
                }
                (Kind::Dims, h) => OpArg::Dims(match h {
                    ArgHint::Dims(d) => d,
                    _ => vec![8, p.sample.map(|s| s as u32).unwrap_or(64)],
                }),
                (Kind::Const, h) => OpArg::Const(match h {
                    ArgHint::Const(c) => c,
                    ArgHint::Literal(v, _) => v as u32,
                    _ => p.sample.map(|s| s as u32).unwrap_or(1),
                }),
                (Kind::Coords | Kind::Values, h) => {
                    let tys = match h {
                        ArgHint::List(t) => t,
                        _ if p.kind == Kind::Coords => vec![Type::S32; 2],
                        _ => vec![Type::U32],
                    };
                    OpArg::Values(
                        tys.iter().enumerate().map(|(j, t)| register(k, &format!("{pname}_{j}"), *t)).collect(),
                    )
                }
                (Kind::Choice(names), h) => OpArg::Choice(if let ArgHint::Choice(c) = h { c } else { names[0] }),
                (Kind::Tag, ArgHint::Tag(t)) => OpArg::Tag(t),
                (Kind::Tag, _) => OpArg::Tag(p.sample_str.unwrap_or("probe")),
                (Kind::ElemOf(n), ArgHint::Literal(v, _)) => {
                    let ty = elem_of(hints.get(n as usize).unwrap_or(&ArgHint::Any));
                    OpArg::Value(Value::imm_i(v as i64, ty))
                }
                (kind, ArgHint::Literal(v, ty)) => {
                    OpArg::Value(Value::imm_i(v as i64, ty.unwrap_or(kind.default_type())))
                }
                (_, ArgHint::Reg(ty)) => OpArg::Value(register(k, &pname, ty)),
                // A value of a buffer's element type follows the buffer's sample.
                (Kind::ElemOf(n), _) => {
                    let ty = elem_of(hints.get(n as usize).unwrap_or(&ArgHint::Any));
                    OpArg::Value(register(k, &pname, ty))
                }
                (Kind::Scalar, _) if def.sample_elem.is_some() => OpArg::Value(register(k, &pname, sample_elem)),
                (kind, _) => OpArg::Value(register(k, &pname, kind.default_type())),
            }
        })
        .collect()
}

/// A runtime value of `ty`: a kernel parameter (a bool is a comparison of one).
fn register(k: &mut KernelBuilder, name: &str, ty: Type) -> Value {
    let name = &k.fresh_param_name(name);
    if ty == Type::Pred {
        let v = k.param(name, Type::U32);
        return k.ne(v, Value::u32(0));
    }
    k.param(name, ty)
}

/// One way of calling an op: each `Choice` option, optional arguments given or omitted, and
/// runtime integers as registers or as literals.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// What is chosen (`"relaxed", "cluster"`, `without count`), empty for the only variant.
    pub label: String,
    /// Whether runtime integers with a sample literal are passed as literals.
    pub literals: bool,
    pub hints: Vec<ArgHint>,
    /// The `::<T>` type.
    pub elem: Option<Type>,
}

/// Every variant of `def`: the product of its choices and optional arguments, each once with
/// registers and (when some argument has a sample literal) once with literals. An array
/// argument (`Array`, `ArrayMut`) is a global buffer in that product; its other spaces
/// (shared, another CTA's shared) are added with the first option of everything else, so an
/// atomic's sems x scopes are not multiplied by three spaces (what a variant needs is the
/// strictest of what its parts need: [`requirement`] composes them).
pub fn variants(def: &OpDef) -> Vec<Variant> {
    let mut vs = variants_in(def, Space::Global);
    vs.extend(fp8_variants(def, &vs));
    if let Some(i) = def.params.iter().position(|p| matches!(p.kind, Kind::Array | Kind::ArrayMut)) {
        for space in [Space::Shared, Space::SharedCluster] {
            let first = variants_in(def, space).into_iter().filter(|v| {
                v.hints.iter().zip(def.params).all(|(h, p)| match (h, p.kind) {
                    (ArgHint::Choice(c), Kind::Choice(names)) => *c == names[0],
                    (ArgHint::Absent, _) => false,
                    _ => true,
                })
            });
            for v in first {
                debug_assert!(matches!(v.hints[i], ArgHint::InSpace(..)));
                vs.push(v);
            }
        }
    }
    vs
}

/// The FP8 forms of an op with wgmma tiles: each variant again with every tile of e4m3, and of
/// e5m2, where the builder accepts it (FP8 operands are K-major only: `arch::wgmma::major_problem`
/// refuses the others, so a variant that does not build has no FP8 form).
fn fp8_variants(def: &OpDef, vs: &[Variant]) -> Vec<Variant> {
    if !def.params.iter().any(|p| p.kind == Kind::MmaTile) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for elem in [Type::E4M3, Type::E5M2] {
        for v in vs {
            let hints = def
                .params
                .iter()
                .zip(&v.hints)
                .map(|(p, h)| if p.kind == Kind::MmaTile { ArgHint::Elem(elem) } else { h.clone() })
                .collect();
            let label = if v.label.is_empty() { elem.ptx().to_string() } else { format!("{elem}, {}", v.label) };
            let fp8 = Variant { label, literals: v.literals, hints, elem: v.elem };
            if variant_kernel(def, &fp8, Target::Sm90a).is_ok() {
                out.push(fp8);
            }
        }
    }
    out
}

fn variants_in(def: &OpDef, space: Space) -> Vec<Variant> {
    let elem = def.sample_elem.unwrap_or(Type::F32);
    let mut out = vec![(Vec::<String>::new(), Vec::<ArgHint>::new())];
    for (i, p) in def.params.iter().enumerate() {
        let mut options: Vec<(Option<String>, ArgHint)> = match p.kind {
            Kind::Choice(names) => names.iter().map(|n| (Some(format!("\"{n}\"")), ArgHint::Choice(n))).collect(),
            Kind::Array | Kind::ArrayMut => {
                let name = match space {
                    Space::Global => "global",
                    Space::Shared => "shared",
                    Space::SharedCluster => "cluster shared",
                };
                vec![(Some(name.to_string()), ArgHint::InSpace(space, elem))]
            }
            _ if def.is_optional(i) => vec![(Some(format!("with {}", p.name)), ArgHint::Any)],
            _ => vec![(None, ArgHint::Any)],
        };
        if def.is_optional(i) {
            options.push((Some(format!("without {}", p.name)), ArgHint::Absent));
        }
        out = out
            .into_iter()
            .flat_map(|(labels, hints)| {
                options.iter().map(move |(l, h)| {
                    let mut labels = labels.clone();
                    labels.extend(l.clone());
                    let mut hints = hints.clone();
                    hints.push(h.clone());
                    (labels, hints)
                })
            })
            .collect();
    }
    let elem = def.turbofish.then_some(elem);
    let mut vs = Vec::new();
    for (labels, hints) in out {
        let label = labels.join(", ");
        let literal: Vec<ArgHint> = def
            .params
            .iter()
            .zip(&hints)
            .map(|(p, h)| match (h, sample_literal(p.kind, p.sample)) {
                (ArgHint::Any, Some(v)) if p.kind.is_value() => ArgHint::Literal(v, None),
                _ => h.clone(),
            })
            .collect();
        let has_literals = literal != hints;
        vs.push(Variant { label: label.clone(), literals: false, hints, elem });
        if has_literals {
            vs.push(Variant { label, literals: true, hints: literal, elem });
        }
    }
    vs
}

/// The literal a runtime argument takes in the literal variant.
fn sample_literal(kind: Kind, sample: Option<i128>) -> Option<i128> {
    sample.or(match kind {
        Kind::Count => Some(1),
        Kind::TxBytes => Some(16),
        Kind::Parity => Some(0),
        _ => None,
    })
}

/// A kernel holding one call of `def` as `variant` for `target`, not yet checked against the
/// target. `Err` carries build errors (a sample the op rejects: a registry bug).
pub fn variant_kernel(def: &OpDef, variant: &Variant, target: Target) -> crate::Result<Kernel> {
    let name = format!("op_{}", def.path.replace('.', "_"));
    let mut k = KernelBuilder::new(name, target);
    let args = sample_args(&mut k, def, &variant.hints);
    lower(&mut k, def, args, variant.elem, def.path.rsplit('.').next().unwrap_or("op"));
    // `setmaxnreg` is honoured only in a kernel whose register count at entry ptxas knows
    // (`arch::limits::setmaxnreg_entry_count_problem`): give the sample one warpgroup's shape.
    if k.uses_setmaxnreg() {
        k.max_block(128, 1, 1);
    }
    k.finish_unchecked()
}

/// Where a variant runs: the PTX ISA version its instructions need and the targets whose
/// check accepts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Support {
    pub ptx: PtxVersion,
    pub targets: Vec<Target>,
}

/// [`Support`] of one variant, by lowering it for every target.
pub fn support(def: &OpDef, variant: &Variant) -> crate::Result<Support> {
    let mut targets = Vec::new();
    let mut ptx = PtxVersion::new(0, 0);
    for t in Target::ALL {
        let k = variant_kernel(def, variant, t)?;
        ptx = ptx.max(ops_ptx(&k));
        if check_kernel(&k).is_ok() {
            targets.push(t);
        }
    }
    Ok(Support { ptx, targets })
}

/// What lowering a call needs that the target lacks.
#[derive(Clone, Debug, PartialEq)]
pub struct Unavailable {
    /// The first instruction the target lacks.
    pub requirement: Requirement,
    /// The oldest target that has every instruction of the call.
    pub fix: Option<Target>,
}

/// What a call would emit, checked against a target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Probe {
    pub unavailable: Option<Unavailable>,
    /// Range and type problems of the emitted instructions (literal arguments are immediates).
    pub value_problems: Vec<String>,
}

/// Lower a call of `def` with arguments made from `hints` into a scratch kernel for `target`
/// and check the instructions it emits: the DSL's compile-time target and value check (the
/// variant the source chose is what gets checked). Build errors of the scratch kernel are
/// not reported (its handles are stand-ins).
pub fn probe(target: Target, def: &OpDef, hints: &[ArgHint], elem: Option<Type>) -> Probe {
    let mut k = KernelBuilder::new("probe", target);
    let args = sample_args(&mut k, def, hints);
    let start = k.blocks[0].len();
    lower(&mut k, def, args, elem, def.path.rsplit('.').next().unwrap_or("op"));
    let emitted = &k.blocks[0][start.min(k.blocks[0].len())..];
    let mut reqs = Vec::new();
    let mut probe = Probe::default();
    walk_insts(emitted, &mut |inst, _| {
        reqs.push(requirement(inst));
        probe.value_problems.extend(value_problems(inst));
    });
    if let Some(first) = reqs.iter().find(|r| !r.available_on(target)) {
        let fix = Target::ALL.into_iter().find(|t| reqs.iter().all(|r| r.available_on(*t)));
        probe.unavailable = Some(Unavailable { requirement: *first, fix });
    }
    probe
}
