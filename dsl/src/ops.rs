//! The op table: every `T.*` name of the DSL, with its arguments, result, the builder call it
//! expands to, and a representative IR instruction for the ISA/value checks. One table, used
//! by the checker (names, arity, argument kinds, literal ranges, target), by the expansion
//! and by the nearest-name suggestions. `dsl/README.md` lists it for users.
//!
//! Expansion templates are Rust expressions over the builder `__k`: `$0`..`$9` are the
//! arguments (already built), `$?N` is `Some(argN)` or `None` when the optional argument is
//! absent, `$T` the turbofish element type (`__p::Type::F32`), `$name` the `let` binding's
//! name as a string literal (shared allocations are named after their variable).

use phaser_codegen::ir::*;

/// What an argument must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Barrier,
    RemoteBarrier,
    Pipeline,
    PipelineState,
    Shared,
    Global,
    GlobalMut,
    TensorMap,
    State,
    /// A 32-bit integer arrival count; a literal must be in 1..=2^20-1.
    Count,
    /// A 32-bit integer tx byte count; a literal must be in 0..=2^20-1.
    TxBytes,
    /// A phase parity: a 32-bit integer or a bool; a literal must be 0 or 1.
    Parity,
    /// Any 32-bit integer (u32 or i32).
    U32,
    /// A 64-bit integer (addresses, cache policies).
    U64,
    /// Any integer.
    Int,
    /// Any numeric scalar; all `Scalar` arguments of one op share one type.
    Scalar,
    /// A value of the element type of argument N (a buffer).
    ElemOf(u8),
    Bool,
    /// A compile-time `u32`: literals and `#[comptime]` parameters (arithmetic allowed).
    Const,
    /// `[n]`: a one-element array of a compile-time `u32` (shared array shapes).
    ConstDims,
    /// `[c0, c1, ..]`: 32-bit integer tensor coordinates.
    Coords,
    /// `[v0, v1, ..]`: any scalars.
    Values,
    /// A string literal from a fixed set; maps to builder tokens. An omitted optional
    /// choice takes the first option.
    Choice(&'static [(&'static str, &'static str)]),
    /// A string literal used as a tag.
    Tag,
}

impl Kind {
    pub fn describe(self) -> String {
        match self {
            Kind::Barrier => "a barrier (`bars.ptr_to([i])`)".into(),
            Kind::RemoteBarrier => "a remote barrier (`T.ptx.mapa(bar, cta)`)".into(),
            Kind::Pipeline => "a pipeline (`T.pipeline.new(stages, consumer_warps)`)".into(),
            Kind::PipelineState => "a pipeline state (`T.pipeline.producer_state(p)` / `consumer_state(p)`)".into(),
            Kind::Shared => "a shared array (`T.alloc_shared::<T>([n])`)".into(),
            Kind::Global => "a global buffer parameter (`&[T]` or `&mut [T]`)".into(),
            Kind::GlobalMut => "a writable global buffer parameter (`&mut [T]`)".into(),
            Kind::TensorMap => "a tensor map parameter (`TensorMap<RANK>`)".into(),
            Kind::State => "an mbarrier state (the result of an arrive)".into(),
            Kind::Count => "an arrival count (u32)".into(),
            Kind::TxBytes => "a tx byte count (u32)".into(),
            Kind::Parity => "a phase parity (u32 0/1 or bool)".into(),
            Kind::U32 => "a 32-bit integer".into(),
            Kind::U64 => "a 64-bit integer".into(),
            Kind::Int => "an integer".into(),
            Kind::Scalar => "a number".into(),
            Kind::ElemOf(n) => format!("a value of argument {n}'s element type"),
            Kind::Bool => "a bool".into(),
            Kind::Const => "a compile-time u32 (a literal or a `#[comptime]` parameter)".into(),
            Kind::ConstDims => "a shape `[n]` with a compile-time u32 `n`".into(),
            Kind::Coords => "coordinates `[c0, c1, ..]` (32-bit integers)".into(),
            Kind::Values => "values `[v0, v1, ..]`".into(),
            Kind::Choice(cs) => {
                let names: Vec<String> = cs.iter().map(|c| format!("\"{}\"", c.0)).collect();
                format!("one of {}", names.join(", "))
            }
            Kind::Tag => "a string literal".into(),
        }
    }
}

/// What an op returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Bool,
    U32,
    U64,
    State,
    Barrier,
    RemoteBarrier,
    Barriers,
    Pipeline,
    PipelineState,
    /// `Shared(T)` of the turbofish type.
    SharedOfTurbofish,
    /// A scalar of the turbofish type.
    Turbofish,
    /// The (shared) type of the op's `Scalar` arguments.
    ScalarArgs,
    /// The element type of argument N (a buffer).
    ElemOf(u8),
}

/// Builds a representative instruction from the literal arguments (None: not a literal).
pub type IsaRepr = fn(&[Option<i128>]) -> Inst;

/// One op of the table.
pub struct OpSpec {
    /// The name after `T.`, e.g. `ptx.mbarrier.try_wait`.
    pub path: &'static str,
    pub params: &'static [(&'static str, Kind)],
    /// How many trailing parameters may be omitted.
    pub optional: u8,
    /// Whether it takes `::<T>` (a scalar type).
    pub turbofish: bool,
    pub ret: Ret,
    pub expand: &'static str,
    /// A representative instruction given the literal arguments (None: not a literal), checked
    /// against the kernel's target with codegen's ISA table and value checks.
    pub isa: Option<IsaRepr>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
}

impl OpSpec {
    pub fn signature(&self) -> String {
        let tf = if self.turbofish { "::<T>" } else { "" };
        let req = self.params.len() - self.optional as usize;
        let args: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, (n, _))| if i >= req { format!("[{n}]") } else { n.to_string() })
            .collect();
        format!("T.{}{tf}({})", self.path, args.join(", "))
    }
}

const SEM_ARRIVE: &[(&str, &str)] = &[("release", "__p::Sem::Release"), ("relaxed", "__p::Sem::Relaxed")];
const SEM_WAIT: &[(&str, &str)] = &[("acquire", "__p::Sem::Acquire"), ("relaxed", "__p::Sem::Relaxed")];
const SCOPE: &[(&str, &str)] = &[("cta", "__p::Scope::Cta"), ("cluster", "__p::Scope::Cluster")];
const PROXY: &[(&str, &str)] = &[
    ("all", "__p::ProxySpace::All"),
    ("shared::cta", "__p::ProxySpace::SharedCta"),
    ("shared::cluster", "__p::ProxySpace::SharedCluster"),
    ("global", "__p::ProxySpace::Global"),
];
const MEMSCOPE: &[(&str, &str)] = &[
    ("cta", "__p::MemScope::Cta"),
    ("cluster", "__p::MemScope::Cluster"),
    ("gpu", "__p::MemScope::Gpu"),
    ("sys", "__p::MemScope::Sys"),
];

// ---- representative instructions --------------------------------------------------------

fn reg(ty: Type) -> Value {
    Value::Reg(Reg { id: 0, ty })
}
/// Argument `i` as an immediate when it was a literal, else a register of `ty`.
fn arg(l: &[Option<i128>], i: usize, ty: Type) -> Value {
    match l.get(i).copied().flatten() {
        Some(x) => Value::imm_i(x as i64, ty),
        None => reg(ty),
    }
}
fn bar() -> Value {
    reg(Type::U32)
}
fn d() -> Reg {
    Reg { id: 0, ty: Type::U32 }
}
fn p() -> Reg {
    Reg { id: 0, ty: Type::Pred }
}
fn mb(op: MbarrierOp) -> Inst {
    Inst::Mbarrier(op)
}
fn arrive(l: &[Option<i128>], count: Option<usize>, sem: Option<Sem>, space: BarSpace, drop: bool) -> Inst {
    let scope = sem.map(|_| Scope::Cta);
    mb(MbarrierOp::Arrive {
        bar: bar(),
        count: count.map(|i| arg(l, i, Type::U32)),
        order: Ordering { sem, scope },
        space,
        state: (space == BarSpace::Cta).then_some(Reg { id: 0, ty: Type::B64 }),
        drop,
    })
}
fn wait_parity(l: &[Option<i128>], i: usize) -> WaitOn {
    WaitOn::Parity(arg(l, i, Type::U32))
}
fn tma_load(mc: bool, hint: bool) -> Inst {
    Inst::Tma(TmaOp::LoadTensor {
        dst: bar(),
        tmap: reg(Type::U64),
        coords: vec![reg(Type::S32)],
        bar: bar(),
        multicast: mc.then(|| reg(Type::U16)),
        cache_hint: hint.then(|| reg(Type::U64)),
    })
}
fn special(s: SpecialReg) -> Inst {
    Inst::ReadSpecial { dst: d(), sreg: s }
}

macro_rules! ops {
    (@tf) => { false };
    (@tf $t:ident) => { true };
    (@isa) => { None };
    (@isa $e:expr) => { Some($e) };
    ($( $path:literal ($($pn:literal : $pk:expr),*) $(opt $opt:literal)? $(turbofish $tf:ident)? -> $ret:ident $(($rn:literal))?
        => $exp:literal $(, isa $isa:expr)? ; $doc:literal )*) => {
        pub const OPS: &[OpSpec] = &[$(
            OpSpec {
                path: $path,
                params: &[$(($pn, $pk)),*],
                optional: 0 $(+ $opt)?,
                turbofish: ops!(@tf $($tf)?),
                ret: Ret::$ret $(($rn))?,
                expand: $exp,
                isa: ops!(@isa $($isa)?),
                doc: $doc,
            },
        )*];
    };
}

use Kind::*;

ops! {
    // ---- coordinates ---------------------------------------------------------------------
    "thread_idx"() -> U32 => "__k.thread_idx(__p::Dim::X)"; "`%tid.x`"
    "thread_idx_y"() -> U32 => "__k.thread_idx(__p::Dim::Y)"; "`%tid.y`"
    "thread_idx_z"() -> U32 => "__k.thread_idx(__p::Dim::Z)"; "`%tid.z`"
    "block_idx"() -> U32 => "__k.block_idx(__p::Dim::X)"; "`%ctaid.x`"
    "block_idx_y"() -> U32 => "__k.block_idx(__p::Dim::Y)"; "`%ctaid.y`"
    "block_idx_z"() -> U32 => "__k.block_idx(__p::Dim::Z)"; "`%ctaid.z`"
    "block_dim"() -> U32 => "__k.block_dim(__p::Dim::X)"; "`%ntid.x`"
    "block_dim_y"() -> U32 => "__k.block_dim(__p::Dim::Y)"; "`%ntid.y`"
    "block_dim_z"() -> U32 => "__k.block_dim(__p::Dim::Z)"; "`%ntid.z`"
    "grid_dim"() -> U32 => "__k.grid_dim(__p::Dim::X)"; "`%nctaid.x`"
    "grid_dim_y"() -> U32 => "__k.grid_dim(__p::Dim::Y)"; "`%nctaid.y`"
    "grid_dim_z"() -> U32 => "__k.grid_dim(__p::Dim::Z)"; "`%nctaid.z`"
    "lane_idx"() -> U32 => "__k.lane_idx()"; "`%laneid`"
    "warp_idx"() -> U32 => "__k.warp_idx()"; "`tid.x / 32`"
    "warpgroup_idx"() -> U32 => "__k.warpgroup_idx()"; "`tid.x / 128`"
    "cluster_cta_rank"() -> U32 => "__k.cluster_cta_rank()",
        isa |_| special(SpecialReg::ClusterCtaRank); "`%cluster_ctarank`"
    "cluster_size"() -> U32 => "__k.cluster_size()",
        isa |_| special(SpecialReg::ClusterNctaRank); "`%cluster_nctarank`"

    // ---- launch shape (compile-time arguments) ------------------------------------------
    "require_block"("x": Const, "y": Const, "z": Const) -> Unit
        => "{ __k.require_block($0, $1, $2); }"; "`.reqntid x, y, z`: the launch must use exactly this block"
    "max_block"("x": Const, "y": Const, "z": Const) -> Unit
        => "{ __k.max_block($0, $1, $2); }"; "`.maxntid x, y, z`"
    "cluster_dims"("x": Const, "y": Const, "z": Const) -> Unit
        => "{ __k.cluster($0, $1, $2); }"; "`.reqnctapercluster x, y, z` (+ `.explicitcluster`)"
    "max_registers"("n": Const) -> Unit => "{ __k.max_registers($0); }"; "`.maxnreg n`"
    "min_blocks_per_sm"("n": Const) -> Unit => "{ __k.min_blocks_per_sm($0); }"; "`.minnctapersm n`"

    // ---- shared memory ------------------------------------------------------------------
    "alloc_shared"("shape": ConstDims) turbofish T -> SharedOfTurbofish
        => "__k.alloc_shared($name, $T, $0)"; "a static shared array, named after its `let`"
    "alloc_barriers"("n": Const) -> Barriers
        => "__k.alloc_barriers($name, $0)"; "`n` 8-byte mbarriers in shared memory"
    "dynamic_shared"("offset": Const) turbofish T -> SharedOfTurbofish
        => "__k.dynamic_shared($T, $0)"; "a view of dynamic shared memory, `offset` bytes in"
    "shared_addr"("arr": Shared) -> U32 => "__k.shared_base_addr($0)"; "32-bit shared address of an array"
    "shared_elem_addr"("arr": Shared, "idx": Int) -> U32
        => "__k.shared_elem_addr($0, $1)"; "32-bit shared address of `arr[idx]`"
    "global_elem_addr"("buf": Global, "idx": Int) -> U64
        => "__k.global_elem_addr($0, $1)"; "64-bit global address of `buf[idx]`"
    "barrier_at_addr"("addr": U32) -> Barrier
        => "__k.barrier_from_shared_addr($0)"; "treat an 8-byte-aligned shared address as a barrier"
    "atomic_add"("buf": GlobalMut, "idx": Int, "v": ElemOf(0)) -> ElemOf(0)
        => "__k.atomic_add_global($0, $1, $2)"; "`atom.global.add`, returns the old value"

    // ---- arithmetic helpers -------------------------------------------------------------
    "select"("cond": Bool, "a": Scalar, "b": Scalar) -> ScalarArgs => "__k.select($0, $1, $2)"; "`cond ? a : b` (`selp`)"
    "min"("a": Scalar, "b": Scalar) -> ScalarArgs => "__k.min($0, $1)"; "`min`"
    "max"("a": Scalar, "b": Scalar) -> ScalarArgs => "__k.max($0, $1)"; "`max`"
    "mad"("a": Scalar, "b": Scalar, "c": Scalar) -> ScalarArgs => "__k.mad($0, $1, $2)"; "`a * b + c`"
    "probe"("tag": Tag, "values": Values) -> Unit
        => "__k.probe($0, &$1)"; "record values in the simulator's trace (a PTX comment)"

    // ---- raw memory ---------------------------------------------------------------------
    "ptx.ld.shared"("addr": U32) turbofish T -> Turbofish
        => "__k.ld_raw(__p::Space::Shared, $T, $0, 0)"; "`ld.shared` from a 32-bit address"
    "ptx.ld.shared_cluster"("addr": U32) turbofish T -> Turbofish
        => "__k.ld_raw(__p::Space::SharedCluster, $T, $0, 0)",
        isa |_| Inst::Memory(MemoryOp::Ld { space: Space::SharedCluster, ty: Type::U32, dst: d(), addr: bar(), offset: 0, volatile: false });
        "`ld.shared::cluster` from a `mapa` address"
    "ptx.ld.global"("addr": U64) turbofish T -> Turbofish
        => "__k.ld_raw(__p::Space::Global, $T, $0, 0)"; "`ld.global` from a 64-bit address"
    "ptx.st.shared"("addr": U32, "v": Scalar) -> Unit
        => "__k.st_raw(__p::Space::Shared, $0, 0, $1)"; "`st.shared`"
    "ptx.st.shared_cluster"("addr": U32, "v": Scalar) -> Unit
        => "__k.st_raw(__p::Space::SharedCluster, $0, 0, $1)",
        isa |_| Inst::Memory(MemoryOp::St { space: Space::SharedCluster, ty: Type::U32, addr: bar(), offset: 0, src: reg(Type::U32), volatile: false });
        "`st.shared::cluster`"
    "ptx.st.global"("addr": U64, "v": Scalar) -> Unit
        => "__k.st_raw(__p::Space::Global, $0, 0, $1)"; "`st.global`"
    "ptx.cp_async"("dst": U32, "src": U64, "bytes": Const) -> Unit
        => "__k.cp_async($0, $1, $2)",
        isa |l| Inst::Memory(MemoryOp::CpAsync { dst: bar(), src: reg(Type::U64), bytes: l[2].map(|b| b as u32).unwrap_or(16) });
        "Ampere `cp.async` of 4/8/16 bytes"
    "ptx.cp_async.commit_group"() -> Unit => "__k.cp_async_commit_group()"; "`cp.async.commit_group`"
    "ptx.cp_async.wait_group"("n": Const) -> Unit => "__k.cp_async_wait_group($0)"; "`cp.async.wait_group n`"

    // ---- mbarrier ---------------------------------------------------------------------
    "ptx.mbarrier.init"("bar": Barrier, "count": Count) -> Unit => "__k.mbarrier_init($0, $1)",
        isa |l| mb(MbarrierOp::Init { bar: bar(), count: arg(l, 1, Type::U32) }); "`mbarrier.init`"
    "ptx.mbarrier.inval"("bar": Barrier) -> Unit => "__k.mbarrier_inval($0)",
        isa |_| mb(MbarrierOp::Inval { bar: bar() }); "`mbarrier.inval`"
    "ptx.mbarrier.arrive"("bar": Barrier) -> State => "__k.mbarrier_arrive($0)",
        isa |l| arrive(l, None, None, BarSpace::Cta, false); "one arrival; returns the phase state"
    "ptx.mbarrier.arrive_count"("bar": Barrier, "count": Count) -> State
        => "__k.mbarrier_arrive_with($0, __p::ArriveOpts { count: Some($1), sem: None, scope: None })",
        isa |l| arrive(l, Some(1), None, BarSpace::Cta, false); "`count` arrivals"
    "ptx.mbarrier.arrive_sem"("bar": Barrier, "sem": Choice(SEM_ARRIVE), "scope": Choice(SCOPE)) -> State
        => "__k.mbarrier_arrive_with($0, __p::ArriveOpts { count: None, sem: Some($1), scope: Some($2) })",
        isa |l| arrive(l, None, Some(Sem::Release), BarSpace::Cta, false); "arrive with `.release`/`.relaxed` and `.cta`/`.cluster`"
    "ptx.mbarrier.arrive_drop"("bar": Barrier) -> State
        => "__k.mbarrier_arrive_drop($0, ::core::default::Default::default())",
        isa |l| arrive(l, None, None, BarSpace::Cta, true); "arrive and drop out of later phases"
    "ptx.mbarrier.arrive_drop_count"("bar": Barrier, "count": Count) -> State
        => "__k.mbarrier_arrive_drop($0, __p::ArriveOpts { count: Some($1), sem: None, scope: None })",
        isa |l| arrive(l, Some(1), None, BarSpace::Cta, true); "`arrive_drop` of `count`"
    "ptx.mapa"("bar": Barrier, "cta": U32) -> RemoteBarrier => "__k.map_barrier_to_cta($0, $1)",
        isa |_| Inst::Sync(SyncOp::Mapa { dst: d(), addr: bar(), cta: reg(Type::U32) }); "the same barrier in CTA `cta` of the cluster"
    "ptx.mbarrier.arrive_remote"("bar": Barrier, "cta": U32, "count": Count) opt 1 -> Unit
        => "{ let __r = __k.map_barrier_to_cta($0, $1); __k.mbarrier_arrive_remote(__r, $?2) }",
        isa |l| arrive(l, Some(2), Some(Sem::Release), BarSpace::Cluster, false); "arrive on CTA `cta`'s copy (`mapa` + `.shared::cluster`)"
    "ptx.mbarrier.arrive_mapped"("rbar": RemoteBarrier, "count": Count) opt 1 -> Unit
        => "__k.mbarrier_arrive_remote($0, $?1)",
        isa |l| arrive(l, Some(1), Some(Sem::Release), BarSpace::Cluster, false); "arrive on a `T.ptx.mapa` barrier"
    "ptx.mbarrier.arrive.expect_tx"("bar": Barrier, "bytes": TxBytes) -> State
        => "__k.mbarrier_arrive_expect_tx($0, $1)",
        isa |l| mb(MbarrierOp::ArriveExpectTx { bar: bar(), bytes: arg(l, 1, Type::U32), order: Ordering::default(), space: BarSpace::Cta, state: Some(Reg { id: 0, ty: Type::B64 }) });
        "one arrival plus `tx += bytes`"
    "ptx.mbarrier.arrive.expect_tx_sem"("bar": Barrier, "bytes": TxBytes, "sem": Choice(SEM_ARRIVE), "scope": Choice(SCOPE)) -> State
        => "__k.mbarrier_arrive_expect_tx_with($0, $1, __p::Ordering { sem: Some($2), scope: Some($3) })",
        isa |l| mb(MbarrierOp::ArriveExpectTx { bar: bar(), bytes: arg(l, 1, Type::U32), order: Ordering { sem: Some(Sem::Release), scope: Some(Scope::Cta) }, space: BarSpace::Cta, state: Some(Reg { id: 0, ty: Type::B64 }) });
        "`arrive.expect_tx` with explicit semantics and scope"
    "ptx.mbarrier.expect_tx"("bar": Barrier, "bytes": TxBytes) -> Unit => "__k.mbarrier_expect_tx($0, $1)",
        isa |l| mb(MbarrierOp::ExpectTx { bar: bar(), bytes: arg(l, 1, Type::U32), scope: Scope::Cta, space: BarSpace::Cta }); "`tx += bytes` without arriving"
    "ptx.mbarrier.complete_tx"("bar": Barrier, "bytes": TxBytes) -> Unit => "__k.mbarrier_complete_tx($0, $1)",
        isa |l| mb(MbarrierOp::CompleteTx { bar: bar(), bytes: arg(l, 1, Type::U32), scope: Scope::Cta, space: BarSpace::Cta }); "`tx -= bytes` (what a copy engine does)"
    "ptx.mbarrier.try_wait"("bar": Barrier, "parity": Parity) -> Unit => "__k.mbarrier_wait($0, $1)",
        isa |l| mb(MbarrierOp::Wait { bar: bar(), on: wait_parity(l, 1), order: Ordering::default() });
        "block until the phase with this parity completed (a `try_wait.parity` loop)"
    "ptx.mbarrier.try_wait_sem"("bar": Barrier, "parity": Parity, "sem": Choice(SEM_WAIT), "scope": Choice(SCOPE)) -> Unit
        => "__k.mbarrier_wait_with($0, $1, __p::Ordering { sem: Some($2), scope: Some($3) })",
        isa |l| mb(MbarrierOp::Wait { bar: bar(), on: wait_parity(l, 1), order: Ordering { sem: Some(Sem::Acquire), scope: Some(Scope::Cta) } });
        "blocking wait with `.acquire`/`.relaxed` and `.cta`/`.cluster`"
    "ptx.mbarrier.try_wait_state"("bar": Barrier, "state": State) -> Unit => "__k.mbarrier_wait_state($0, $1)",
        isa |_| mb(MbarrierOp::Wait { bar: bar(), on: WaitOn::State(reg(Type::B64)), order: Ordering::default() });
        "block until the phase of an arrive's state completed"
    "ptx.mbarrier.try_wait_once"("bar": Barrier, "parity": Parity, "hint_ns": U32) opt 1 -> Bool
        => "__k.mbarrier_try_wait_once($0, $1, $?2)",
        isa |l| mb(MbarrierOp::TryWait { done: p(), bar: bar(), on: wait_parity(l, 1), hint: None, order: Ordering::default() });
        "one `try_wait.parity` attempt; true if the phase completed"
    "ptx.mbarrier.test_wait"("bar": Barrier, "parity": Parity) -> Bool => "__k.mbarrier_test_wait($0, $1)",
        isa |l| mb(MbarrierOp::TestWait { done: p(), bar: bar(), on: wait_parity(l, 1), order: Ordering::default() });
        "non-blocking `test_wait.parity`; true if the phase completed"
    "ptx.mbarrier.test_wait_state"("bar": Barrier, "state": State) -> Bool => "__k.mbarrier_test_wait_state($0, $1)",
        isa |_| mb(MbarrierOp::TestWait { done: p(), bar: bar(), on: WaitOn::State(reg(Type::B64)), order: Ordering::default() });
        "non-blocking `test_wait` on an arrive's state"
    "ptx.mbarrier.pending_count"("state": State) -> U32 => "__k.mbarrier_pending_count($0)",
        isa |_| mb(MbarrierOp::PendingCount { dst: d(), state: reg(Type::B64) }); "arrivals pending in the state's phase"

    // ---- fences and CTA / warp / cluster synchronization ------------------------------
    "ptx.fence.proxy_async"("space": Choice(PROXY)) opt 1 -> Unit => "__k.fence_proxy_async($0)",
        isa |_| Inst::Sync(SyncOp::FenceProxyAsync { space: ProxySpace::All }); "`fence.proxy.async[.space]`"
    "ptx.fence.mbarrier_init"() -> Unit => "__k.fence_mbarrier_init()",
        isa |_| Inst::Sync(SyncOp::FenceMbarrierInit); "`fence.mbarrier_init.release.cluster`"
    "ptx.fence.acq_rel"("scope": Choice(MEMSCOPE)) -> Unit => "__k.fence($0)",
        isa |_| Inst::Sync(SyncOp::MemBar { scope: MemScope::Cta }); "`fence.acq_rel.scope`"
    "ptx.elect_sync"() -> Bool => "__k.elect_sync()",
        isa |_| Inst::Sync(SyncOp::ElectSync { pred: p() }); "true in exactly one lane of the warp"
    "cuda.cta_sync"() -> Unit => "__k.cta_sync()"; "`__syncthreads()` (`bar.sync 0`)"
    "ptx.bar.sync"("id": U32, "count": U32) opt 1 -> Unit => "__k.bar_sync($0, $?1)",
        isa |l| Inst::Sync(SyncOp::BarSync { id: arg(l, 0, Type::U32), count: l.get(1).map(|_| arg(l, 1, Type::U32)) });
        "named barrier `id` over `count` threads (all when omitted)"
    "ptx.bar.arrive"("id": U32, "count": U32) -> Unit => "__k.bar_arrive($0, $1)",
        isa |l| Inst::Sync(SyncOp::BarArrive { id: arg(l, 0, Type::U32), count: arg(l, 1, Type::U32) }); "`bar.arrive id, count`"
    "ptx.setmaxnreg.inc"("count": Const) -> Unit => "__k.setmaxnreg(true, $0)",
        isa |l| Inst::Sync(SyncOp::SetMaxNReg { inc: true, count: l[0].map(|c| c as u32).unwrap_or(128) });
        "`setmaxnreg.inc.sync.aligned.u32 count`"
    "ptx.setmaxnreg.dec"("count": Const) -> Unit => "__k.setmaxnreg(false, $0)",
        isa |l| Inst::Sync(SyncOp::SetMaxNReg { inc: false, count: l[0].map(|c| c as u32).unwrap_or(128) });
        "`setmaxnreg.dec.sync.aligned.u32 count`"
    "ptx.barrier.cluster.arrive"() -> Unit => "__k.cluster_arrive()",
        isa |_| Inst::Sync(SyncOp::ClusterArrive { relaxed: false }); "`barrier.cluster.arrive`"
    "ptx.barrier.cluster.arrive_relaxed"() -> Unit => "__k.cluster_arrive_relaxed()",
        isa |_| Inst::Sync(SyncOp::ClusterArrive { relaxed: true }); "`barrier.cluster.arrive.relaxed`"
    "ptx.barrier.cluster.wait"() -> Unit => "__k.cluster_wait()",
        isa |_| Inst::Sync(SyncOp::ClusterWait); "`barrier.cluster.wait`"
    "cuda.cluster_sync"() -> Unit => "__k.cluster_sync()",
        isa |_| Inst::Sync(SyncOp::ClusterWait); "cluster arrive + wait"
    "ptx.trap"() -> Unit => "__k.trap()"; "abort the kernel"

    // ---- TMA and tcgen05 ----------------------------------------------------------------
    "ptx.cp_async.bulk.tensor.g2s"("dst": U32, "tmap": TensorMap, "coords": Coords, "bar": Barrier) -> Unit
        => "__k.tma_load($0, $1, &$2, $3)", isa |_| tma_load(false, false);
        "TMA load of a box into shared `dst`, completing tx bytes on `bar`"
    "ptx.cp_async.bulk.tensor.g2s_multicast"("dst": U32, "tmap": TensorMap, "coords": Coords, "bar": Barrier, "cta_mask": Int) -> Unit
        => "__k.tma_load_multicast($0, $1, &$2, $3, $4)", isa |_| tma_load(true, false);
        "TMA load multicast to the CTAs of `cta_mask`"
    "ptx.cp_async.bulk.tensor.g2s_hint"("dst": U32, "tmap": TensorMap, "coords": Coords, "bar": Barrier, "policy": U64) -> Unit
        => "__k.tma_load_hinted($0, $1, &$2, $3, $4)", isa |_| tma_load(false, true);
        "TMA load with an L2 cache policy"
    "ptx.cp_async.bulk.tensor.s2g"("tmap": TensorMap, "coords": Coords, "src": U32) -> Unit
        => "__k.tma_store($0, &$1, $2)",
        isa |_| Inst::Tma(TmaOp::StoreTensor { tmap: reg(Type::U64), coords: vec![reg(Type::S32)], src: bar() });
        "TMA store of shared `src` to the box at `coords`"
    "ptx.cp_async.bulk.prefetch.tensor"("tmap": TensorMap, "coords": Coords) -> Unit
        => "__k.tma_prefetch($0, &$1)",
        isa |_| Inst::Tma(TmaOp::PrefetchTensor { tmap: reg(Type::U64), coords: vec![reg(Type::S32)] });
        "prefetch a box into L2"
    "ptx.cp_async.bulk.g2s"("dst": U32, "src": U64, "bytes": U32, "bar": Barrier) -> Unit
        => "__k.bulk_load($0, $1, $2, $3)",
        isa |l| Inst::Tma(TmaOp::LoadBulk { dst: bar(), src: reg(Type::U64), bytes: arg(l, 2, Type::U32), bar: bar() });
        "bulk copy global → shared (multiple of 16 bytes), completing on `bar`"
    "ptx.cp_async.bulk.s2g"("dst": U64, "src": U32, "bytes": U32) -> Unit
        => "__k.bulk_store($0, $1, $2)",
        isa |l| Inst::Tma(TmaOp::StoreBulk { dst: reg(Type::U64), src: bar(), bytes: arg(l, 2, Type::U32) });
        "bulk copy shared → global"
    "ptx.cp_async.bulk.commit_group"() -> Unit => "__k.bulk_commit_group()",
        isa |_| Inst::Tma(TmaOp::CommitGroup); "`cp.async.bulk.commit_group`"
    "ptx.cp_async.bulk.wait_group"("n": Const) -> Unit => "__k.bulk_wait_group($0, false)",
        isa |_| Inst::Tma(TmaOp::WaitGroup { n: 0, read: false }); "wait until at most `n` bulk groups are pending"
    "ptx.cp_async.bulk.wait_group_read"("n": Const) -> Unit => "__k.bulk_wait_group($0, true)",
        isa |_| Inst::Tma(TmaOp::WaitGroup { n: 0, read: true }); "... until their sources were read"
    "ptx.tcgen05.commit"("bar": Barrier) -> Unit => "__k.tcgen05_commit($0)",
        isa |_| Inst::Tcgen05(Tcgen05Op::Commit { bar: bar(), multicast: None });
        "arrive on `bar` once prior tcgen05 ops finished (sm_100a)"
    "ptx.cp_async.mbarrier.arrive"("bar": Barrier) -> Unit => "__k.cp_async_mbarrier_arrive($0, false)",
        isa |_| Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { bar: bar(), noinc: false });
        "arrive on `bar` when this thread's prior `cp.async` copies land (net-zero: pending is incremented first)"
    "ptx.cp_async.mbarrier.arrive_noinc"("bar": Barrier) -> Unit => "__k.cp_async_mbarrier_arrive($0, true)",
        isa |_| Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { bar: bar(), noinc: true });
        "... counted as one of the barrier's expected arrivals (`.noinc`)"
    "pipeline.new"("stages": Const, "consumer_warps": Const) -> Pipeline
        => "__k.pipeline($name, __p::PipelineConfig::tma($0, __p::Arrivals::Warps($1)))";
        "an S-stage full/empty pipeline: `full` expects 1 producer arrival (+ tx bytes), `empty` one per consumer warp"
    "pipeline.new_threads"("stages": Const, "consumer_threads": Const) -> Pipeline
        => "__k.pipeline($name, __p::PipelineConfig::tma($0, __p::Arrivals::Threads($1)))";
        "... with `empty` expecting one arrival per consumer thread"
    "pipeline.init"("pipe": Pipeline) -> Unit => "$0.init(__k)",
        isa |_| Inst::Sync(SyncOp::FenceMbarrierInit);
        "thread 0 inits every barrier, `fence.mbarrier_init`, then the CTA syncs (all threads call it)"
    "pipeline.producer_state"("pipe": Pipeline) -> PipelineState => "$0.producer_start_state(__k)";
        "stage 0, phase 1 (a fresh `empty` barrier passes a parity-1 wait: every buffer starts empty)"
    "pipeline.consumer_state"("pipe": Pipeline) -> PipelineState => "$0.consumer_start_state(__k)";
        "stage 0, phase 0 (consumers wait for the first fill)"
    "pipeline.producer_acquire"("pipe": Pipeline, "state": PipelineState) -> Unit => "$0.producer_acquire(__k, &$1)",
        isa |_| mb(MbarrierOp::Wait { bar: bar(), on: WaitOn::Parity(reg(Type::U32)), order: Ordering::default() });
        "wait until the state's stage is empty"
    "pipeline.producer_commit"("pipe": Pipeline, "state": PipelineState, "bytes": TxBytes) -> Barrier
        => "$0.producer_commit(__k, &$1, $2)",
        isa |l| mb(MbarrierOp::ArriveExpectTx { bar: bar(), bytes: arg(l, 2, Type::U32), order: Ordering::default(), space: BarSpace::Cta, state: None });
        "`arrive.expect_tx(bytes)` on the stage's `full` barrier; returns it (the TMA load's barrier)"
    "pipeline.producer_arrive"("pipe": Pipeline, "state": PipelineState) -> Unit => "$0.producer_arrive(__k, &$1)",
        isa |l| arrive(l, None, None, BarSpace::Cta, false);
        "plain arrive on `full` (a producer that stored with ordinary instructions)"
    "pipeline.consumer_wait"("pipe": Pipeline, "state": PipelineState) -> Unit => "$0.consumer_wait(__k, &$1)",
        isa |_| mb(MbarrierOp::Wait { bar: bar(), on: WaitOn::Parity(reg(Type::U32)), order: Ordering::default() });
        "wait until the state's stage is full"
    "pipeline.consumer_release"("pipe": Pipeline, "state": PipelineState) -> Unit => "$0.consumer_release(__k, &$1)",
        isa |l| arrive(l, None, None, BarSpace::Cta, false);
        "arrive on the stage's `empty` barrier (once per consumer warp or thread, as declared)"
    "pipeline.producer_tail"("pipe": Pipeline, "state": PipelineState) -> Unit => "$0.producer_tail(__k, &$1)",
        isa |_| mb(MbarrierOp::Wait { bar: bar(), on: WaitOn::Parity(reg(Type::U32)), order: Ordering::default() });
        "wait for the consumers' last releases so the CTA does not exit with copies in flight"
    "pipeline.advance"("state": PipelineState) -> Unit => "$0.advance(__k)";
        "next stage; the parity flips when the index wraps at S"
    "pipeline.stage"("state": PipelineState) -> U32 => "$0.index()"; "the state's stage index"
    "pipeline.phase"("state": PipelineState) -> U32 => "$0.phase()"; "the state's phase parity"
    "pipeline.full"("pipe": Pipeline, "state": PipelineState) -> Barrier => "$0.full_barrier(__k, &$1)";
        "the stage's `full` barrier"
    "pipeline.empty"("pipe": Pipeline, "state": PipelineState) -> Barrier => "$0.empty_barrier(__k, &$1)";
        "the stage's `empty` barrier"
}

pub fn lookup(path: &str) -> Option<&'static OpSpec> {
    OPS.iter().find(|o| o.path == path)
}

/// Every name that starts with `prefix.` (namespaces such as `ptx.mbarrier`).
pub fn is_namespace(path: &str) -> bool {
    OPS.iter().any(|o| o.path.starts_with(path) && o.path[path.len()..].starts_with('.'))
}

/// Methods on values (not in the `T` namespace): `bars.ptr_to([i])`, `x.min(y)`, `x.max(y)`.
pub const METHODS: &[&str] = &["ptr_to", "min", "max"];

/// The op table as Markdown (the README's table is generated from this; a test keeps them equal).
#[cfg(test)]
pub fn markdown_table() -> String {
    let mut s = String::from("| DSL call | returns | builder call | what |\n|---|---|---|---|\n");
    for o in OPS {
        let ret = match o.ret {
            Ret::Unit => "—".to_string(),
            Ret::Bool => "bool".into(),
            Ret::U32 => "u32".into(),
            Ret::U64 => "u64".into(),
            Ret::State => "State".into(),
            Ret::Barrier => "Barrier".into(),
            Ret::RemoteBarrier => "RemoteBarrier".into(),
            Ret::Barriers => "Barriers".into(),
            Ret::Pipeline => "Pipeline".into(),
            Ret::PipelineState => "PipelineState".into(),
            Ret::SharedOfTurbofish => "Shared<T>".into(),
            Ret::Turbofish => "T".into(),
            Ret::ScalarArgs => "type of the args".into(),
            Ret::ElemOf(n) => format!("element type of arg {n}"),
        };
        let call = o.expand.replace('|', "\\|");
        s.push_str(&format!("| `{}` | {ret} | `{call}` | {} |\n", o.signature(), o.doc.replace('|', "\\|")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readme_table_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- op-table-begin -->\n", "<!-- op-table-end -->");
        let a = readme.find(begin).expect("begin marker") + begin.len();
        let b = readme.find(end).expect("end marker");
        let table = markdown_table();
        if readme[a..b] != table {
            if std::env::var_os("UPDATE_OP_TABLE").is_some() {
                std::fs::write(path, format!("{}{table}{}", &readme[..a], &readme[b..])).unwrap();
            } else {
                panic!("dsl/README.md's op table is stale: rerun with UPDATE_OP_TABLE=1");
            }
        }
    }

    #[test]
    fn every_op_is_exercised_by_the_kitchen_sink_test() {
        let src = include_str!("../../tests/dsl_ops.rs");
        let missing: Vec<&str> = OPS
            .iter()
            .map(|o| o.path)
            .filter(|p| !src.contains(&format!("T.{p}(")) && !src.contains(&format!("T.{p}::<")))
            .collect();
        assert!(missing.is_empty(), "ops not used in tests/dsl_ops.rs: {missing:?}");
    }
    #[test]
    fn names_unique_and_templates_parse() {
        for (i, o) in OPS.iter().enumerate() {
            assert!(OPS[..i].iter().all(|p| p.path != o.path), "{} twice", o.path);
            let mut t = o.expand.replace("$name", "\"x\"").replace("$T", "__p::Type::F32");
            for j in 0..o.params.len() {
                t = t
                    .replace(&format!("$?{j}"), &format!("Some(__a{j})"))
                    .replace(&format!("${j}"), &format!("__a{j}"));
            }
            assert!(!t.contains('$'), "{}: {t}", o.path);
            syn::parse_str::<syn::Expr>(&t).unwrap_or_else(|e| panic!("{}: {e}", o.path));
        }
    }
}
