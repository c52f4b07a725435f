//! The shared-memory layout and the limits table: offsets aligned, in order, never
//! overlapping; a kernel over its target's static limit is refused at build time at the
//! Rust line of the allocation that crossed it; the PTX is printed once per kernel.

use phaser_codegen::arch::SharedLayout;
use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::{Type, Value};
use phaser_codegen::{SourceLoc, Target};
use proptest::prelude::*;

const ELEMS: [Type; 6] = [Type::U16, Type::U32, Type::F32, Type::U64, Type::F64, Type::BF16];

/// One allocation: element type, length, and an explicit alignment (log2, 4..=10) or none.
fn alloc_strategy() -> impl Strategy<Value = (usize, u32, Option<u32>)> {
    (0..ELEMS.len(), 1u32..300, prop::option::of(4u32..=10))
}

proptest! {
    #[test]
    fn offsets_are_aligned_ordered_and_disjoint(
        allocs in prop::collection::vec(alloc_strategy(), 0..10), // at most 10 x (2400 + 1024) bytes: under 48 KiB
        barriers in 0u32..4,
        dynamic in 0u32..70_000,
    ) {
        let mut k = KernelBuilder::new("layout", Target::Sm90a);
        for (i, &(e, len, align)) in allocs.iter().enumerate() {
            match align {
                Some(log2) => { k.alloc_shared_aligned(&format!("a{i}"), ELEMS[e], len, 1 << log2); }
                None => { k.alloc_shared(&format!("a{i}"), ELEMS[e], len); }
            }
        }
        if barriers > 0 {
            k.alloc_barriers("bars", barriers);
        }
        let k = k.finish().unwrap();
        let layout = k.shared_layout();
        prop_assert_eq!(layout.placements.len(), k.shared().len());
        let mut end = 0;
        for (a, p) in k.shared().iter().zip(&layout.placements) {
            prop_assert_eq!(p.start % a.align as u64, 0, "`{}` aligned to {}", a.name, a.align);
            prop_assert!(p.start >= end, "`{}` overlaps its predecessor", a.name);
            prop_assert!(p.start - end < a.align as u64, "`{}`: no more padding than its alignment needs", a.name);
            prop_assert_eq!(p.end - p.start, a.elem.size() as u64 * a.len as u64);
            end = p.end;
        }
        prop_assert_eq!(layout.static_bytes, end);
        prop_assert_eq!(k.static_shared_bytes() as u64, end);
        prop_assert_eq!(layout.dynamic_base % 1024, 0);
        prop_assert!(layout.dynamic_base >= end && layout.dynamic_base - end < 1024);
        let total = layout.total(dynamic);
        prop_assert_eq!(total, if dynamic == 0 { end } else { layout.dynamic_base + dynamic as u64 });
        // The launch check agrees with the table.
        let fits = total <= Target::Sm90a.limits().max_shared_per_block as u64;
        prop_assert_eq!(k.check_shared_launch(dynamic).is_ok(), fits);
        // The printer reports the same static size.
        let ptx = k.ptx().unwrap();
        let header = format!("// kernel layout: target sm_90a, {end} bytes static shared");
        prop_assert!(ptx.lines().any(|l| l == header), "{}", header);
    }
}

#[test]
fn layout_of_a_known_kernel() {
    let mut k = KernelBuilder::new("known", Target::Sm80);
    k.alloc_barriers("full", 2); // 16 bytes at 0
    k.alloc_shared("tile", Type::F32, 40); // 160 bytes, 128-aligned: at 128
    k.alloc_shared("flag", Type::U32, 1); // 4 bytes, 16-aligned: at 288
    let k = k.finish().unwrap();
    let l = k.shared_layout();
    let spans: Vec<(u64, u64)> = l.placements.iter().map(|p| (p.start, p.end)).collect();
    assert_eq!(spans, [(0, 16), (128, 288), (288, 292)]);
    assert_eq!((l.static_bytes, l.dynamic_base), (292, 1024));
    assert_eq!(SharedLayout::of(&[]).total(0), 0);
}

#[test]
fn static_shared_over_the_limit_is_refused_at_the_allocating_line() {
    for target in Target::ALL {
        let mut k = KernelBuilder::new("big", target);
        k.alloc_shared("a", Type::F32, 8 * 1024); // 32 KiB: fits
        let line = line!() + 1;
        k.alloc_shared("b", Type::F32, 4 * 1024 + 1); // to 48 KiB + 4: over
        k.alloc_shared("c", Type::F32, 16); // also over, but `b` crossed first
        let err = k.finish().unwrap_err();
        assert_eq!(err.diagnostics.len(), 1, "{err}");
        let d = &err.diagnostics[0];
        assert_eq!(d.loc.map(|l| (l.file, l.line)), Some((file!(), line)), "{err}");
        assert!(
            d.message.starts_with(&format!(
                "shared array `b` (16388 bytes at offset 32768) ends at byte 49156, past the 48 KiB static shared \
                 memory limit of {target} (static total 49232 bytes)"
            )),
            "{err}"
        );
    }
    // Exactly 48 KiB is fine.
    let mut k = KernelBuilder::new("edge", Target::Sm90a);
    k.alloc_shared("a", Type::F32, 12 * 1024);
    let k = k.finish().unwrap();
    assert_eq!(k.static_shared_bytes(), 48 * 1024);
}

#[test]
fn dynamic_offsets_past_the_target_limit_are_refused_at_their_line() {
    let mut k = KernelBuilder::new("far", Target::Sm86);
    k.dynamic_shared(Type::F32, 99 * 1024 - 4); // the last f32 of sm_86's 99 KiB: fine
    let line = line!() + 1;
    k.dynamic_shared(Type::F32, 99 * 1024);
    let err = k.finish().unwrap_err();
    let d = &err.diagnostics[0];
    assert_eq!(d.loc, Some(SourceLoc { file: file!(), line, column: d.loc.unwrap().column }));
    assert_eq!(
        d.message,
        "dynamic shared offset 101376 lies beyond sm_86's 101376-byte (99 KiB) shared memory per block"
    );
}

#[test]
fn clusters_and_block_shapes_read_the_limits_table() {
    let mut k = KernelBuilder::new("c", Target::Sm90a);
    k.cluster(4, 4, 2);
    let err = k.finish().unwrap_err();
    assert!(err.to_string().contains("cluster shape [4, 4, 2] has 32 CTAs; allowed is 1..=16 (8 portable)"), "{err}");
    let mut k = KernelBuilder::new("c", Target::Sm80);
    k.cluster(2, 1, 1);
    let err = k.finish().unwrap_err();
    assert_eq!(err.diagnostics.len(), 1, "{err}");
    assert!(err.first_message().starts_with("thread-block clusters need sm_90"), "{err}");
    let mut k = KernelBuilder::new("b", Target::Sm90a);
    k.require_block(1, 1, 65);
    let err = k.finish().unwrap_err();
    assert_eq!(err.first_message(), "block shape [1, 1, 65]: dimension 2 exceeds 64");
}

#[test]
fn ptx_is_printed_once_per_kernel_and_again_for_an_edited_kernel() {
    let mut k = KernelBuilder::new("once", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.st_global(out, Value::u32(0), Value::u32(1));
    let k = k.finish().unwrap();
    assert_eq!(k.ptx_emissions(), 0);
    let first = k.ptx().unwrap();
    for _ in 0..5 {
        assert!(std::sync::Arc::ptr_eq(&first, &k.ptx().unwrap()), "the cached text is handed out");
    }
    assert_eq!(k.ptx_emissions(), 1);
    // A clone is the same immutable kernel: it hands out the same text without printing.
    let copy = k.clone();
    assert!(std::sync::Arc::ptr_eq(&first, &copy.ptx().unwrap()));
    assert_eq!(copy.ptx_emissions(), 1);
    // An edited kernel is a new kernel: it prints its own text, the original keeps its own.
    let mut parts = k.to_parts();
    parts.name = "renamed".into();
    let renamed = parts.finish().unwrap();
    assert_eq!(renamed.ptx_emissions(), 0);
    let second = renamed.ptx().unwrap();
    assert_eq!(renamed.ptx_emissions(), 1);
    assert!(second.contains(".visible .entry renamed("), "{second}");
    assert!(!second.contains(".entry once("));
    assert!(std::sync::Arc::ptr_eq(&first, &k.ptx().unwrap()));
    assert_eq!(k.ptx_emissions(), 1);
}
