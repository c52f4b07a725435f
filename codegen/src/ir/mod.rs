//! The kernel IR: typed virtual registers, ops grouped by family, structured control flow.

pub mod arith;
pub mod derived;
pub mod dynamic_alloc;
pub mod effects;
pub mod escape;
pub mod flag;
pub mod fragment;
pub mod inst;
pub mod kernel;
pub mod layout;
pub mod mbarrier;
pub mod memory;
pub mod mnemonic;
pub mod operands;
pub mod printed;
pub mod source_loc;
pub mod special;
pub mod stmt;
pub mod swizzle;
pub mod sync;
pub mod target;
pub mod tcgen05;
pub mod tensor_map_spec;
pub mod tma;
pub mod types;
pub mod value;
pub mod warp;
pub mod wgmma;

pub use arith::{ArithOp, BinOp, CmpOp, FloatBinOp, MathFn, Rounding, UnOp};
pub use dynamic_alloc::DynamicAlloc;
pub use effects::{
    AsyncLaunch, AsyncUnit, BarrierAction, Completion, Effects, Fence, GroupAction, MemSpace, SideEffect, Spaces,
    SyncEffect,
};
pub use escape::{InlineAsm, Printf};
pub use flag::{flag_name, FlagSpin};
pub use fragment::FragmentOp;
pub use inst::Inst;
pub use kernel::{Kernel, KernelParts, LaunchBounds, Module, Param, ParamKind, SharedAlloc, SharedKind, Watchdog};
pub use layout::{Major, MatrixDescriptor, MmaOperand, SmemTile, Swizzle};
pub use mbarrier::{BarSpace, MbarrierOp, Ordering, Scope, Sem, WaitOn};
pub use memory::{Access, AtomOp, AtomOrder, AtomSem, MemOrder, MemoryOp, Space};
pub use source_loc::SourceLoc;
pub use special::{Dim, SpecialReg};
pub use stmt::{nesting_depth, walk_insts, Block, Stmt, StmtKind};
pub use sync::{MemScope, ProxySpace, SyncOp};
pub use target::Target;
pub use tcgen05::{
    tmem_addr, tmem_lane_col, CpShape, CtaGroup, InstrDesc, LdStShape, Mma, MmaA, MmaKind, Tcgen05Op, UmmaAcc,
    UmmaDescriptor, UmmaElem,
};
pub use tensor_map_spec::TensorMapSpec;
pub use tma::TmaOp;
pub use types::Type;
pub use value::{AllocId, ParamId, Reg, Value};
pub use warp::{ReduxOp, ShflMode, VoteMode, WarpOp};
pub use wgmma::{MmaAsync, MmaElem, WgmmaA, WgmmaOp};
