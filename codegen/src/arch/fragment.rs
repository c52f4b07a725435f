//! The register fragments of wgmma (PTX ISA 9.7.15.5.1, "Register Fragments": the layouts of
//! the accumulator D and of A from registers for `.m64nNk16`/`.m64nNk32`), the one statement
//! of which element of the 64-row tile each register of each thread holds. The builder (its
//! fragment ops), the DSL's `T.fragment.*` and the simulator's wgmma datapath all ask here.
//!
//! Both layouts are *separable*: an element's (row, col) is the **thread's origin** (from its
//! warp and lane, known at run time) plus the **register's offset** (known when the kernel is
//! built). That is what makes a fragment a type: the builder computes the origin once, at run
//! time, and every register's coordinates are that origin plus a constant (CuTe's
//! `partition_C` of an identity tensor, with the per-register part folded at compile time).
//!
//! D (f32, 64 x N), thread `t` (warp `w = t / 32`, lane `l = t % 32`), register `i`:
//!
//! | part | row | col |
//! |---|---|---|
//! | thread origin | `16 w + l / 4` | `2 (l % 4)` |
//! | register offset | `8 ((i / 2) % 2)` | `8 (i / 4) + i % 2` |
//!
//! A (16-bit, 64 x 16 per k-step; two elements per `b32` register), register `r` (0..4),
//! element `p` (0: low half, 1: high half):
//!
//! | part | row | col |
//! |---|---|---|
//! | thread origin | `16 w + l / 4` | `2 (l % 4)` |
//! | register offset | `8 (r % 2)` | `8 (r / 2) + p` |
//!
//! (FP8 A, k32: four elements per register, `col = 4 (l % 4) + 16 (r / 2) + p`.) The two
//! thread origins agree for 16-bit A: the f32 accumulator of one wgmma is, register pair by
//! register pair, the A fragment of the next one (FlashAttention's P kept in registers).

/// Rows of the tile per warp: each warp holds one 16-row band.
pub const WARP_ROWS: u32 = 16;
/// Threads that share a row: the 4 lanes `4 q .. 4 q + 3`, which differ in the lane's low 2
/// bits, so butterfly shuffles with [`ROW_LANE_MASKS`] reduce a row.
pub const THREADS_PER_ROW: u32 = 4;
/// The butterfly lane masks that combine the [`THREADS_PER_ROW`] threads of a row.
pub const ROW_LANE_MASKS: [u32; 2] = [1, 2];
/// Rows of D each thread holds: its origin row and the row 8 below (row "half" 0 and 1).
pub const ROWS_PER_THREAD: u32 = 2;
/// Consecutive columns a thread holds in each 8-column group of D (and 16-bit A).
pub const COLS_PER_THREAD: u32 = 2;

/// (row, col) of a fragment element: thread origins, register offsets and their sums.
pub type Coord = (u32, u32);

/// The origin of warpgroup thread `t` (0..128) in D and in a 16-bit A fragment.
pub const fn thread_origin(t: u32) -> Coord {
    let (w, l) = (t / 32, t % 32);
    (WARP_ROWS * w + l / THREADS_PER_ROW, COLS_PER_THREAD * (l % THREADS_PER_ROW))
}

/// The offset of D register `i` from its thread's origin.
pub const fn d_register_offset(i: u32) -> Coord {
    (8 * ((i / 2) % 2), 8 * (i / 4) + i % 2)
}

/// Which of the thread's [`ROWS_PER_THREAD`] rows D register `i` lies in (0: the origin's).
pub const fn d_row_half(i: u32) -> u32 {
    d_register_offset(i).0 / 8
}

/// (row, col) in the 64 x N tile of D register `i` of warpgroup thread `t`.
pub const fn d_element(t: u32, i: u32) -> Coord {
    let ((r0, c0), (dr, dc)) = (thread_origin(t), d_register_offset(i));
    (r0 + dr, c0 + dc)
}

/// Elements per A-fragment register for elements of `elem_bytes` (2: f16/bf16, 1: FP8).
const fn a_per_reg(elem_bytes: u32) -> u32 {
    if elem_bytes >= 2 {
        2
    } else {
        4
    }
}

/// The offset of element `part` of A register `reg` (0..4) for 16-bit elements, from the
/// thread's origin ([`thread_origin`]).
pub const fn a_register_offset(reg: u32, part: u32) -> Coord {
    (8 * (reg % 2), 8 * (reg / 2) + part)
}

/// (row, col) in the 64 x K tile of A (one k-step) of element `part` of A register `reg`
/// (0..4) of warpgroup thread `t`; `elem_bytes` 2 (two elements per register, K = 16) or 1
/// (FP8, four per register, K = 32). `part` 0 is the low bits.
pub const fn a_element(t: u32, reg: u32, part: u32, elem_bytes: u32) -> Coord {
    let per_reg = a_per_reg(elem_bytes);
    let (w, l) = (t / 32, t % 32);
    let row = WARP_ROWS * w + l / THREADS_PER_ROW + 8 * (reg % 2);
    let col = 4 * per_reg * (reg / 2) + per_reg * (l % THREADS_PER_ROW) + part;
    (row, col)
}

/// Registers of a 16-bit A fragment per thread (one k-step of 16).
pub const A_REGS: u32 = 4;
/// 16-bit elements per A register.
pub const A_PARTS: u32 = 2;
/// Columns of D that one 16-bit A fragment covers (the K of a k-step).
pub const A_COLS: u32 = 16;

/// The D register holding element `part` of 16-bit A register `reg` when columns
/// `[16 kstep, 16 kstep + 16)` of a 64 x N accumulator become the A of a k-step, in every
/// thread (the two layouts' thread origins agree): found by matching register offsets, so
/// it follows from the two layouts above and nothing else. `None` past the accumulator's
/// `len` registers.
pub fn d_register_of_a(kstep: u32, reg: u32, part: u32, len: u32) -> Option<u32> {
    let (dr, dc) = a_register_offset(reg, part);
    let want = (dr, dc + A_COLS * kstep);
    (0..len).find(|&i| d_register_offset(i) == want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d_layout_covers_the_tile_once_and_matches_the_isa_figure() {
        for n in [8u32, 64, 256] {
            let mut seen = vec![false; (64 * n) as usize];
            for t in 0..128 {
                for i in 0..n / 2 {
                    let (r, c) = d_element(t, i);
                    assert!(r < 64 && c < n);
                    let at = (r * n + c) as usize;
                    assert!(!seen[at], "n={n}: ({r}, {c}) held twice");
                    seen[at] = true;
                }
            }
        }
        // The PTX figure's first rows: T0 holds d0,d1 at (0,0),(0,1) and d2,d3 at (8,0),(8,1);
        // T1 starts at column 2; T4 at row 1; warp 1 at row 16; d4 at column 8.
        assert_eq!(d_element(0, 0), (0, 0));
        assert_eq!(d_element(0, 3), (8, 1));
        assert_eq!(d_element(1, 0), (0, 2));
        assert_eq!(d_element(4, 1), (1, 1));
        assert_eq!(d_element(32, 0), (16, 0));
        assert_eq!(d_element(0, 4), (0, 8));
    }

    #[test]
    fn a_layout_covers_each_k_step_once() {
        for bytes in [2u32, 1] {
            let k = 32 / bytes;
            let mut seen = vec![false; (64 * k) as usize];
            for t in 0..128 {
                for reg in 0..A_REGS {
                    for part in 0..4 / bytes {
                        let (r, c) = a_element(t, reg, part, bytes);
                        assert!(r < 64 && c < k, "{bytes}: ({r}, {c})");
                        assert!(!std::mem::replace(&mut seen[(r * k + c) as usize], true));
                    }
                }
            }
        }
        // 16-bit A is origin + offset.
        for t in 0..128 {
            for reg in 0..A_REGS {
                for part in 0..A_PARTS {
                    let ((r0, c0), (dr, dc)) = (thread_origin(t), a_register_offset(reg, part));
                    assert_eq!(a_element(t, reg, part, 2), (r0 + dr, c0 + dc));
                }
            }
        }
    }

    #[test]
    fn the_threads_of_a_row_are_its_butterfly_partners() {
        for t in 0..128u32 {
            let partners: Vec<u32> = ROW_LANE_MASKS.iter().map(|m| t ^ m).collect();
            for i in 0..8 {
                for &p in &partners {
                    assert_eq!(d_element(t, i).0, d_element(p, i).0);
                }
            }
            // The quad: every combination of the masks reaches each of the 4 threads once.
            let quad: std::collections::BTreeSet<u32> = (0..4).map(|b| t ^ (b & 1) ^ (b & 2)).collect();
            assert_eq!(quad.len() as u32, THREADS_PER_ROW);
            // No other thread holds the row.
            for u in 0..128 {
                if !quad.contains(&u) {
                    assert_ne!(thread_origin(u).0, thread_origin(t).0);
                }
            }
        }
    }

    #[test]
    fn an_accumulator_becomes_the_a_fragment_of_the_same_thread() {
        // Every A element of k-step s comes from the D register holding the same element.
        for n in [16u32, 64, 128, 256] {
            for s in 0..n / A_COLS {
                for reg in 0..A_REGS {
                    for part in 0..A_PARTS {
                        let i = d_register_of_a(s, reg, part, n / 2).expect("a D register");
                        for t in 0..128 {
                            let (r, c) = a_element(t, reg, part, 2);
                            assert_eq!(d_element(t, i), (r, c + A_COLS * s));
                        }
                    }
                }
            }
        }
        assert_eq!(d_register_of_a(4, 0, 0, 32), None);
        // The FlashAttention identity: A register r of k-step s is D registers 8 s + 2 r, +1.
        assert_eq!(d_register_of_a(1, 3, 1, 32), Some(8 + 6 + 1));
    }
}
