//! The run-time swizzled tile address the builder emits (`smem_tile_addr`, used by the GEMM
//! epilogue's `stmatrix`) equals the host's `SmemTile::offset` (where TMA puts an element),
//! for every swizzle and element size: a kernel computes the address of each element in the
//! simulator and the host compares.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, SmemTile, Swizzle, Type, Value};
use phaser::codegen::Target;
use phaser::{Arg, Device, LaunchConfig};

const THREADS: u32 = 128;

#[test]
fn run_time_tile_addresses_match_the_layout() {
    let dev = Device::sim(Default::default());
    for swizzle in Swizzle::ALL {
        for elem in [1u32, 2, 4] {
            let tile = SmemTile::new(elem, 16, 2 * swizzle.row_bytes() / elem, swizzle);
            assert_eq!(tile.problem(), None);
            let n = tile.rows * tile.cols;
            let mut k = KernelBuilder::new("tile_addr", Target::Sm90a);
            let out = k.param_global("out", Type::U32, true);
            let base = k.param("base", Type::U32);
            k.require_block(THREADS, 1, 1);
            let tid = k.thread_idx(Dim::X);
            let cta = k.block_idx(Dim::X);
            let i = k.mad(cta, Value::u32(THREADS), tid);
            let live = k.lt(i, Value::u32(n));
            k.if_then(live, |k| {
                let row = k.div(i, Value::u32(tile.cols));
                let col = k.rem(i, Value::u32(tile.cols));
                let addr = k.smem_tile_addr(&tile, base, row, col);
                k.st_global(out, i, addr);
            });
            let kernel = k.finish().unwrap();
            let buf = dev.alloc::<u32>(n as usize).unwrap();
            let base_addr = 3 * tile.align();
            dev.launch(
                &kernel,
                LaunchConfig::linear(n.div_ceil(THREADS), THREADS),
                &[Arg::buffer(&buf), Arg::scalar(base_addr)],
            )
            .unwrap();
            let got = dev.download(&buf).unwrap();
            for r in 0..tile.rows {
                for c in 0..tile.cols {
                    assert_eq!(
                        got[(r * tile.cols + c) as usize],
                        base_addr + tile.offset(r, c),
                        "{swizzle:?}, {elem}-byte elements, ({r}, {c})"
                    );
                }
            }
        }
    }
}
