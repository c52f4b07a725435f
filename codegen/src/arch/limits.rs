//! Hardware limits, one table per target: the single source every check reads (the builder,
//! `check_kernel`, the runtime's launch check on both backends and the simulator).
//!
//! Sources: CUDA C++ Programming Guide, "Compute Capabilities" (technical specifications
//! table) and the PTX ISA's `mbarrier` chapter (arrival count and tx-count ranges).

use super::target::Target;
use crate::ir::Type;

/// Limits of one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Static (`.shared` declared) memory per block: 48 KiB on every target; more needs
    /// dynamic shared memory and the opt-in attribute.
    pub max_static_shared: u32,
    /// Shared memory one block may use in all (static, the 1024-byte aligned dynamic window
    /// and the dynamic bytes), with the opt-in attribute raised.
    pub max_shared_per_block: u32,
    pub max_threads_per_block: u32,
    /// Largest block extent per dimension (x, y, z).
    pub max_block_dims: [u32; 3],
    /// Largest grid extent per dimension (x, y, z).
    pub max_grid_dims: [u32; 3],
    /// CTAs per cluster that are portable (0: the target has no clusters).
    pub max_cluster_ctas: u32,
    /// CTAs per cluster with the non-portable opt-in.
    pub max_cluster_ctas_non_portable: u32,
    /// Resident blocks per SM: the largest meaningful `.minnctapersm` (ptxas ignores more).
    pub max_blocks_per_sm: u32,
    /// Registers per thread: the largest `.maxnreg` ptxas honours (it ignores more).
    pub max_registers_per_thread: u32,
}

const KIB: u32 = 1024;

/// Registers one thread may hold on every target (the `.maxnreg` ptxas honours).
pub const MAX_REGISTERS_PER_THREAD: u32 = 255;
/// 32-bit registers in one SM's register file (64 Ki on every target).
pub const REGISTERS_PER_SM: u32 = 64 * KIB;
/// `setmaxnreg`'s register counts: multiples of [`SETMAXNREG_STEP`] in
/// `SETMAXNREG_MIN..=SETMAXNREG_MAX` (PTX ISA `setmaxnreg`).
pub const SETMAXNREG_MIN: u32 = 24;
pub const SETMAXNREG_MAX: u32 = 256;
pub const SETMAXNREG_STEP: u32 = 8;

/// Why `count` is no `setmaxnreg` register count, if it is none.
pub fn setmaxnreg_problem(count: u32) -> Option<String> {
    let ok = (SETMAXNREG_MIN..=SETMAXNREG_MAX).contains(&count) && count.is_multiple_of(SETMAXNREG_STEP);
    (!ok).then(|| {
        format!(
            "setmaxnreg count {count} must be a multiple of {SETMAXNREG_STEP} in {SETMAXNREG_MIN}..={SETMAXNREG_MAX}"
        )
    })
}

/// Threads in one block, on every target.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// A CTA's named barriers (`bar.sync`/`bar.arrive` ids `0..NAMED_BARRIERS`).
pub const NAMED_BARRIERS: u32 = 16;
/// A named barrier counts threads in whole warps (PTX ISA `bar`: "a multiple of warp size").
pub const NAMED_BARRIER_COUNT_STEP: u32 = 32;

/// Why `count` is no thread count of a named barrier in a block of `block_threads` threads
/// (`None`: not known), if it is none: a non-zero multiple of 32, at most the block's threads
/// (else the barrier never completes) and at most any block's. The builder and the DSL check
/// constants with the declared block shape; the simulator checks run-time counts with the
/// launched block.
pub fn named_barrier_count_problem(count: i128, block_threads: Option<u64>) -> Option<String> {
    let (step, most) = (NAMED_BARRIER_COUNT_STEP as i128, MAX_THREADS_PER_BLOCK as i128);
    if count <= 0 || count % step != 0 || count > most {
        return Some(format!("named barrier thread count {count} must be a multiple of {step} in {step}..={most}"));
    }
    match block_threads {
        Some(n) if count > n as i128 => Some(format!(
            "named barrier thread count {count} exceeds the block's {n} threads: the barrier would never complete"
        )),
        _ => None,
    }
}

/// Why `id` is no named barrier, if it is none.
pub fn named_barrier_id_problem(id: i128) -> Option<String> {
    let most = NAMED_BARRIERS as i128 - 1;
    (!(0..=most).contains(&id)).then(|| format!("named barrier id {id} is out of range: must be in 0..={most}"))
}

/// Whether ptxas honours `setmaxnreg` in a kernel, by what the kernel declares. ptxas needs
/// a warp's register count at entry: from a cap (`.maxnreg`) or from the block shape
/// (`.reqntid`/`.maxntid`), which with `.minnctapersm 1` gives 65536 / threads. Without either it
/// ignores the instruction (C7508, an `info` line, not an error). The builder's `finish` adds
/// `.minnctapersm 1` to a kernel with a block shape and no cap, so the DSL, which checks
/// before `finish`, passes `block_shape` for a declared shape; `check_kernel`, after it, for a
/// shape with `.minnctapersm`. One rule for the builder and the DSL (which reports it at the span).
pub fn setmaxnreg_entry_count_problem(register_cap: bool, block_shape: bool) -> Option<&'static str> {
    (!register_cap && !block_shape).then_some(
        "`setmaxnreg` in a kernel without a register cap: ptxas would ignore it (C7508: the register count at \
         entry is unknown)\n  help: declare the block shape, e.g. `T.require_block(384, 1, 1);` (Phaser then \
         adds `.minnctapersm 1`: 65536 / 384 threads = 168 registers at entry), or a cap: `T.max_registers(168);`",
    )
}

/// Most 32-bit registers one register array may take: a thread has
/// [`Limits::max_registers_per_thread`] on every target, and the rest of the kernel needs some.
pub const MAX_ARRAY_REGISTERS: u32 = MAX_REGISTERS_PER_THREAD;

const COMMON: Limits = Limits {
    max_static_shared: 48 * KIB,
    max_shared_per_block: 48 * KIB,
    max_threads_per_block: MAX_THREADS_PER_BLOCK,
    max_block_dims: [1024, 1024, 64],
    max_grid_dims: [(1 << 31) - 1, 65535, 65535],
    max_cluster_ctas: 0,
    max_cluster_ctas_non_portable: 0,
    max_blocks_per_sm: 32,
    max_registers_per_thread: MAX_REGISTERS_PER_THREAD,
};

const SM80: Limits = Limits { max_shared_per_block: 163 * KIB, ..COMMON };
const SM86: Limits = Limits { max_shared_per_block: 99 * KIB, max_blocks_per_sm: 16, ..COMMON };
const SM89: Limits = Limits { max_blocks_per_sm: 24, ..SM86 };
const SM90: Limits =
    Limits { max_shared_per_block: 227 * KIB, max_cluster_ctas: 8, max_cluster_ctas_non_portable: 16, ..COMMON };

impl Target {
    /// This target's hardware limits.
    pub const fn limits(self) -> &'static Limits {
        match self {
            Target::Sm80 => &SM80,
            Target::Sm86 => &SM86,
            Target::Sm89 => &SM89,
            Target::Sm90 | Target::Sm90a | Target::Sm100a => &SM90,
        }
    }
}

impl Limits {
    /// The largest alignment a shared array may ask for: the largest power of two within the
    /// per-block shared memory (a larger one could never place a second array, and ptxas
    /// hangs on alignments of 2^30 and more).
    pub const fn max_shared_align(&self) -> u32 {
        1 << (31 - self.max_shared_per_block.leading_zeros())
    }
}

/// Deepest nesting of structured control flow (`if`, loops) in a kernel. Every walker of
/// the IR (checks, printer, simulator) recurses per level; the bound keeps them far from the
/// stack's end on any thread, and no hand-written kernel comes near it.
pub const MAX_NESTING_DEPTH: usize = 256;

/// Largest arrival count an mbarrier accepts (`mbarrier.init` count, `arrive` count): 2^20 - 1.
pub const MAX_ARRIVALS: i128 = (1 << 20) - 1;
/// Largest `|tx-count|` of an mbarrier phase: the range is [-(2^20 - 1), 2^20 - 1].
pub const MAX_TX_BYTES: i128 = (1 << 20) - 1;
/// The dimensions a TMA tensor map (and a tensor copy) may have.
pub const TMA_RANKS: std::ops::RangeInclusive<u8> = 1..=5;
/// Largest extent of one TMA box dimension, in elements (`cuTensorMapEncodeTiled`'s `boxDim`).
pub const TMA_MAX_BOX_DIM: u32 = 256;
/// Largest extent of one tensor-map dimension, in elements (`globalDim`: 1 ..= 2^32).
pub const TMA_MAX_DIM: u64 = 1 << 32;
/// A tensor map's byte strides (`globalStrides`) must be below this: 2^40.
pub const TMA_MAX_STRIDE: u64 = 1 << 40;

/// A tile-mode tensor copy's innermost coordinate must land on a multiple of this many bytes:
/// `inner coordinate x element size` (negative coordinates included) a multiple of 16. Outer
/// coordinates are free, and boxes partly or wholly out of bounds (negative ones included) are
/// fine while the inner coordinate is aligned.
///
/// Measured, not documented: on an NVIDIA H200 (2026-12-01; an nvcc-compiled CUDA C++ kernel
/// and Phaser's emitted PTX alike) a misaligned inner coordinate faults the whole kernel,
/// `CUDA_ERROR_ILLEGAL_INSTRUCTION` through plain `cuModuleLoadData` JIT (reported
/// asynchronously at the next `bar.sync`, by every thread) and `CUDA_ERROR_MISALIGNED_ADDRESS`
/// through the cuLink line-info JIT. As far as we found, neither the PTX ISA
/// (`cp.async.bulk.tensor`) nor the CUDA driver API (`cuTensorMapEncodeTiled`) states it for
/// tile mode; they state 16-byte rules only for the global address, the strides and the inner
/// box row. Only loads were measured (2-D, `SWIZZLE_NONE`, no interleave, L2 promotion none or
/// 256B, u16 and u32 elements); stores, prefetches and multicast loads go through the same copy
/// engine and are held to the same rule, unmeasured. The probe is `bench/tma_coord_probe.cu`
/// (run by `bench/tma_coord_probe.sh`, table in `bench/gpu-runs.md`).
pub const TMA_INNER_COORD_ALIGN: u32 = 16;

/// Why a tensor copy's innermost coordinate `coord` (elements of `elem`) faults on the GPU
/// ([`TMA_INNER_COORD_ALIGN`]), or `None` when it is aligned. The one wording the builder, the
/// DSL and the simulator report.
pub fn tma_inner_coord_problem(coord: i64, elem: Type) -> Option<String> {
    let size = elem.size() as i64;
    let align = TMA_INNER_COORD_ALIGN as i64;
    let bytes = coord * size;
    if bytes.rem_euclid(align) == 0 {
        return None;
    }
    let step = align / gcd(align, size);
    Some(format!(
        "the innermost tensor coordinate {coord} (of {elem}, {size} bytes each) is {bytes} bytes, not a multiple of \
         {align}: the GPU faults (CUDA_ERROR_ILLEGAL_INSTRUCTION; MISALIGNED_ADDRESS under the line-info JIT); use a \
         multiple of {step} {elem} elements"
    ))
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Dynamic shared memory starts at the first multiple of this after the static allocations
/// (the printer declares the `extern .shared` window with this alignment: 128-byte TMA
/// swizzling needs 1024-byte aligned tiles).
pub const DYNAMIC_SHARED_ALIGN: u32 = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_tma_coordinates_are_whole_16_byte_units() {
        // The H200 probe table (bench/gpu-runs.md): u32 faults at 30, 29, 31, 1, -3, 2;
        // runs at 0, 32, 28, 4, -4. u16 faults at -3, 35, 3; runs at 0.
        for c in [30, 29, 31, 1, -3, 2] {
            assert!(tma_inner_coord_problem(c, Type::U32).is_some(), "u32 {c}");
        }
        for c in [0, 32, 28, 4, -4] {
            assert_eq!(tma_inner_coord_problem(c, Type::U32), None, "u32 {c}");
        }
        for c in [-3, 35, 3] {
            assert!(tma_inner_coord_problem(c, Type::U16).is_some(), "u16 {c}");
        }
        for c in [0, -8, 32] {
            assert_eq!(tma_inner_coord_problem(c, Type::U16), None, "u16 {c}");
        }
        let m = tma_inner_coord_problem(30, Type::U32).unwrap();
        assert!(m.starts_with("the innermost tensor coordinate 30 (of u32, 4 bytes each) is 120 bytes"), "{m}");
        assert!(m.ends_with("use a multiple of 4 u32 elements"), "{m}");
        assert!(tma_inner_coord_problem(1, Type::F64).unwrap().ends_with("multiple of 2 f64 elements"));
    }

    #[test]
    fn shared_memory_per_target() {
        let kib = |t: Target| t.limits().max_shared_per_block / 1024;
        assert_eq!(
            Target::ALL.map(kib),
            [163, 99, 99, 227, 227, 227],
            "sm_80 163 KiB, sm_86/sm_89 99 KiB, sm_90/sm_90a/sm_100a 227 KiB"
        );
        for t in Target::ALL {
            let l = t.limits();
            assert_eq!(l.max_static_shared, 48 * 1024);
            assert!(l.max_static_shared <= l.max_shared_per_block);
            assert_eq!(l.max_cluster_ctas > 0, t.sm() >= 90, "clusters exist from sm_90 on ({t})");
            assert!(l.max_shared_align().is_power_of_two() && l.max_shared_align() <= l.max_shared_per_block);
            assert!(l.max_shared_align() * 2 > l.max_shared_per_block);
        }
        assert_eq!(Target::Sm90a.limits().max_shared_align(), 128 * 1024);
        assert_eq!(Target::Sm86.limits().max_shared_align(), 64 * 1024);
        assert_eq!(Target::ALL.map(|t| t.limits().max_blocks_per_sm), [32, 16, 24, 32, 32, 32]);
    }
}
