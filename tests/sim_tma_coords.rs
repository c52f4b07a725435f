//! TMA coordinates in the wrong order (PTX's innermost-first where `T.tma.load` takes the
//! tile's outermost-first): the box lands outside the tensor and the GPU zero-fills it, a
//! legal copy of nothing. The simulator warns at the copy's line when the other order would
//! put the box inside the tensor (issue 19), and is silent on the right order and on a box
//! outside in both orders (clipping at a tensor's end).

use phaser::runtime::sim::{Category, Severity, SimConfig};
use phaser::{Arg, Device, LaunchConfig, Swizzle};

const FILE: &str = "tests/sim_tma_coords.rs";

fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_tma_coords.rs").lines().collect();
    lines.iter().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap() as u32 + 1
}

/// Loads the 8 x 16 box at rows `r0..r0 + 8` of a 64 x 16 tensor (`swap != 0`: with the
/// coordinates in PTX's order) and writes it to `out`, one element per thread.
#[phaser::kernel(target = "sm_90a")]
fn load_rows(#[tma(box = [8, 16])] a: TensorMap<u32, 2>, out: &mut [u32], r0: u32, swap: u32) {
    T.require_block(128, 1, 1);
    let tile = T.alloc_shared::<u32>([8, 16]);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 1);
    }
    T.cuda.cta_sync();
    if t == 0 {
        T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
        if swap != 0 {
            T.tma.load(tile, a, [0, r0], bar); // COORDS-SWAPPED
        } else {
            T.tma.load(tile, a, [r0, 0], bar);
        }
    }
    T.ptx.mbarrier.try_wait(bar, 0);
    out[t] = tile[t / 16][t % 16];
}

fn run(r0: u32, swap: u32) -> (phaser::runtime::sim::SimReport, Vec<u32>) {
    let k = load_rows::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let src = dev.upload(&(0..64 * 16).collect::<Vec<u32>>()).unwrap();
    // Dimensions innermost first, as the driver's tensor maps take them: 16 columns, 64 rows.
    let map = dev.tensor_map(&src, &[16, 64], &[16, 8], Swizzle::None).unwrap();
    let out = dev.alloc::<u32>(128).unwrap();
    let args = [Arg::TensorMap(&map), Arg::buffer(&out), Arg::scalar(r0), Arg::scalar(swap)];
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 128), &args).unwrap();
    let got = dev.download(&out).unwrap();
    (rep, got)
}

#[test]
fn coordinates_in_ptx_order_are_a_warning_at_the_copy() {
    let (rep, got) = run(32, 1);
    assert_eq!(got, vec![0; 128], "the GPU's result: all zero-fill");
    assert!(!rep.has_errors(), "a legal copy: a warning, not a failed check\n{}", rep.text());
    assert_eq!(rep.findings.len(), 1, "{}", rep.text());
    let f = &rep.findings[0];
    assert_eq!((f.category, f.severity), (Category::OutOfBounds, Severity::Warning), "{}", rep.text());
    assert_eq!(f.loc.map(|l| (l.file, l.line)), Some((FILE, line_of("COORDS-SWAPPED"))), "{}", rep.text());
    for part in [
        "the box at [0, 32] (outermost first) lies entirely outside the tensor",
        "dimension 1 starts at 32, its extent is 16",
        "in the other order, [32, 0], it lies inside",
    ] {
        assert!(f.message.contains(part), "{part:?} not in {:?}", f.message);
    }
}

#[test]
fn the_right_order_and_a_box_outside_in_both_orders_get_no_warning() {
    let (rep, got) = run(32, 0);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(got, (32 * 16..40 * 16).collect::<Vec<u32>>());
    // Rows 64..72 are past the tensor's end in either order: clipping, not a mistake.
    let (rep, got) = run(64, 0);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(got, vec![0; 128]);
}
