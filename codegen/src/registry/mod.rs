//! The op registry: one entry per `T.*` op of the DSL, the single source its checker,
//! expansion, target check, docs and tests are derived from.
//!
//! An entry gives the op's path and other libraries' names for it, its parameters (kinds,
//! optional ones, literal samples), its result, a one-line doc, and its lowering: one call of
//! the typed builder API. What the op needs from the target is not written here a second
//! time: it is what [`crate::arch::isa::requirement`] says of the instructions the lowering
//! emits for the variant chosen (`"relaxed"` or `"release"`, remote or local), found by
//! lowering it (`probe`, `support`). `codegen/tests/registry_ptxas.rs` checks every
//! variant on every target against `ptxas`.
//!
//! Adding an op: an entry in the family file below, a builder method, a printer arm and a
//! simulator arm (plus, when it is a new instruction, its IR variant with its ISA fact and its
//! answers in `ir/operands.rs`, `ir/effects.rs` and `ir/mnemonic.rs`: the compiler lists them).

mod args;
mod def;
mod doc;
mod lower;

pub use args::{FromOpOut, OpArg, OpArgs, OpOut};
pub use def::{scalar_name, Choice, Kind, Lower, OpDef, ParamDef, Ret};
pub use doc::{markdown_table, support_summary};
pub use lower::{
    call, call_as, probe, sample_args, support, variant_kernel, variants, ArgHint, Probe, Support, Unavailable, Variant,
};

/// `Choice { names, values }` from `"name" => value` pairs, kept in lockstep.
macro_rules! choice {
    ($($name:literal => $value:expr),* $(,)?) => {
        $crate::registry::Choice { names: &[$($name),*], values: &[$($value),*] }
    };
}

/// The [`Kind`] of a parameter as written in an entry (`Count`, `ElemOf(0)`, `Choice(SCOPE)`).
macro_rules! kind {
    (Choice($choice:expr)) => { $crate::registry::Kind::Choice($choice.names) };
    ($kind:ident $(($arg:expr))?) => { $crate::registry::Kind::$kind $(($arg))? };
}

/// The next argument of a lowering, as the handle its kind is.
macro_rules! take {
    ($call:ident, Barrier) => {
        $call.barrier()
    };
    ($call:ident, RemoteBarrier) => {
        $call.remote_barrier()
    };
    ($call:ident, Pipeline) => {
        $call.pipeline()
    };
    ($call:ident, PipelineState) => {
        $call.pipeline_state()
    };
    ($call:ident, Shared) => {
        $call.shared()
    };
    ($call:ident, Global) => {
        $call.global()
    };
    ($call:ident, GlobalMut) => {
        $call.global()
    };
    ($call:ident, RemoteShared) => {
        $call.remote_shared()
    };
    ($call:ident, Array) => {
        $call.array()
    };
    ($call:ident, ArrayMut) => {
        $call.array()
    };
    ($call:ident, Places) => {
        $call.places()
    };
    ($call:ident, TensorMap) => {
        $call.tensor_map()
    };
    ($call:ident, Const) => {
        $call.konst()
    };
    ($call:ident, Dims) => {
        $call.dims()
    };
    ($call:ident, Tile) => {
        $call.tile()
    };
    ($call:ident, MmaTile) => {
        $call.tile()
    };
    ($call:ident, Registers($t:expr)) => {
        $call.registers()
    };
    ($call:ident, Coords) => {
        $call.values()
    };
    ($call:ident, Values) => {
        $call.values()
    };
    ($call:ident, Tag) => {
        $call.tag()
    };
    ($call:ident, Choice($choice:expr)) => {
        $call.choice(&$choice)
    };
    ($call:ident, $value:ident $(($arg:expr))?) => {
        $call.value()
    };
}

/// The next optional argument: `Option<Value>` (`Option<u32>` for a constant), or a choice
/// (the first option when omitted).
macro_rules! take_opt {
    ($call:ident, Choice($choice:expr)) => {
        $call.choice(&$choice)
    };
    ($call:ident, Const) => {
        $call.opt_konst()
    };
    ($call:ident, Values) => {
        $call.opt_values()
    };
    ($call:ident, $value:ident $(($arg:expr))?) => {
        $call.opt_value()
    };
}

/// A family's entries:
///
/// ```text
/// /// one-line doc
/// "path" ["lib:alias", ..] .method ::<T> (name: Kind = sample, tag: Tag as "sample", ..; optional: Kind)
///     as U32 -> Ret
///     = |k, call| builder_call(name, ..);
/// ```
///
/// `as U32` (optional) is the element type the samples use for arrays and `::<T>`.
/// `.method` (optional) is Rust's method of the same meaning: `x.method(b, ..)` in a kernel
/// is this op with `x` as its first argument (`x.exp2()` is `T.ex2(x)`).
///
/// ```text
/// ```
///
/// The lowering sees each parameter as a local of its handle type (optional ones as
/// `Option<Value>`, choices as the chosen IR value), `call.elem()` (the `::<T>` type) and
/// `call.name()` (the `let` name).
macro_rules! ops {
    (@sample) => { None };
    (@sample $s:literal) => { Some($s) };
    (@sample_str) => { None };
    (@sample_str $s:literal) => { Some($s) };
    (@elem) => { None };
    (@elem $t:ident) => { Some($crate::ir::Type::$t) };
    (@turbofish) => { false };
    (@turbofish $t:ident) => { true };
    (@one $x:ident) => { 1 };
    (@method) => { None };
    (@method $m:ident) => { Some(stringify!($m)) };
    ($(
        #[doc = $doc:literal]
        $path:literal $([$($alias:literal),* $(,)?])? $(. $method:ident)? $(::<$tf:ident>)?
        ($($pn:ident : $pk:ident $(($pa:expr))? $(= $ps:literal)? $(as $pstr:literal)?),* $(; $($on:ident : $ok:ident $(($oa:expr))? $(= $os:literal)?),*)?)
        $(as $se:ident)?
        -> $ret:ident $(($($rn:expr),+))?
        = |$k:ident, $call:ident| $lower:expr;
    )*) => {
        pub(super) const OPS: &[$crate::registry::OpDef] = &[$(
            $crate::registry::OpDef {
                path: $path,
                aliases: &[$($($alias),*)?],
                method: ops!(@method $($method)?),
                params: &[
                    $($crate::registry::ParamDef { name: stringify!($pn), kind: kind!($pk $(($pa))?), sample: ops!(@sample $($ps)?), sample_str: ops!(@sample_str $($pstr)?) },)*
                    $($($crate::registry::ParamDef { name: stringify!($on), kind: kind!($ok $(($oa))?), sample: ops!(@sample $($os)?), sample_str: None },)*)?
                ],
                optional: 0 $($(+ ops!(@one $on))*)?,
                turbofish: ops!(@turbofish $($tf)?),
                sample_elem: ops!(@elem $($se)?),
                ret: $crate::registry::Ret::$ret $(($($rn),+))?,
                doc: $doc.trim_ascii(),
                builder: stringify!($lower),
                lower: |$k: &mut $crate::builder::KernelBuilder, $call: &mut $crate::registry::OpArgs| -> $crate::registry::OpOut {
                    $(let $pn = take!($call, $pk $(($pa))?);)*
                    $($(let $on = take_opt!($call, $ok $(($oa))?);)*)?
                    let _ = (&$k, &$call);
                    $crate::registry::OpOut::from($lower)
                },
            },
        )*];
    };
}

mod arith;
mod cute;
mod debug;
mod flag;
mod fragment;
mod launch;
mod mbarrier;
mod memory;
mod pipeline;
mod sync;
mod tcgen05;
mod tile;
mod tma;
mod warp;
mod wgmma;

/// The families in the order the docs list them.
const FAMILIES: &[&[OpDef]] = &[
    launch::OPS,
    memory::OPS,
    flag::OPS,
    tile::OPS,
    arith::OPS,
    mbarrier::OPS,
    cute::OPS,
    sync::OPS,
    warp::OPS,
    tma::OPS,
    wgmma::OPS,
    fragment::OPS,
    tcgen05::OPS,
    pipeline::OPS,
    debug::OPS,
];

/// Every op.
pub fn ops() -> impl Iterator<Item = &'static OpDef> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// The op that Rust's method `name` stands for (`exp2`: `T.ex2`), its receiver the first
/// argument.
pub fn method(name: &str) -> Option<&'static OpDef> {
    ops().find(|o| o.method == Some(name))
}

/// The op at `path` (after `T.`).
pub fn lookup(path: &str) -> Option<&'static OpDef> {
    ops().find(|o| o.path == path)
}

/// Whether `path` is a namespace of ops (`ptx.mbarrier`), not an op.
pub fn is_namespace(path: &str) -> bool {
    ops().any(|o| o.path.starts_with(path) && o.path[path.len()..].starts_with('.'))
}

/// The op another library calls `path` (`wait_barrier`, `cute::wait_barrier`,
/// `mbarrier.wait`, `syncthreads`), with that library's spelling (`cute:wait_barrier`).
pub fn find_alias(path: &str) -> Option<(&'static OpDef, &'static str)> {
    // `cuda::__syncthreads` and `__syncthreads` both name `syncthreads` of CUDA.
    let norm =
        |s: &str| s.replace("::", ".").split('.').map(|p| p.trim_start_matches('_')).collect::<Vec<_>>().join(".");
    let wanted = norm(path);
    ops().find_map(|o| {
        o.aliases.iter().find_map(|a| {
            let (lib, name) = a.split_once(':').unwrap_or(("", a));
            let name = norm(name);
            (wanted == name || wanted == format!("{lib}.{name}")).then_some((o, *a))
        })
    })
}

/// Barriers wider than a warp: a "did you mean" for a warp-level name must never offer one
/// (a `bar.sync 0` in place of `__syncwarp` deadlocks a warp-specialized branch, where only
/// some warps reach it).
const WIDER_THAN_A_WARP: &[&str] = &[
    "cuda.cta_sync",
    "cuda.cluster_sync",
    "cuda.warpgroup_sync",
    "ptx.bar.sync",
    "ptx.bar.arrive",
    "ptx.barrier.cluster.arrive",
    "ptx.barrier.cluster.arrive_relaxed",
    "ptx.barrier.cluster.wait",
];

/// Whether `candidate` may be suggested for the unknown op `unknown`: never a barrier wider
/// than a warp for a warp-level name.
pub fn may_suggest(unknown: &str, candidate: &str) -> bool {
    let u = unknown.to_ascii_lowercase();
    let warp_level = u.contains("warp") && !u.contains("warpgroup");
    !(warp_level && WIDER_THAN_A_WARP.contains(&candidate))
}

/// The op an unknown warp-level synchronization name (`syncwarp`, `sync_warp`, `warp_barrier`)
/// most likely means: `__syncwarp`.
pub fn warp_sync_for(unknown: &str) -> Option<&'static OpDef> {
    let u = unknown.to_ascii_lowercase();
    let warp_level = u.contains("warp") && !u.contains("warpgroup");
    (warp_level && (u.contains("sync") || u.contains("barrier"))).then(|| lookup("cuda.warp_sync")).flatten()
}

#[cfg(test)]
mod tests;
