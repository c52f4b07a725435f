//! The simulator lays shared memory out exactly as codegen's layout says (the one the PTX
//! printer declares and the CUDA launch sizes), whatever the allocations.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::Type;
use phaser_codegen::Target;
use phaser_runtime::sim::memory::SmemLayout;
use proptest::prelude::*;

proptest! {
    #[test]
    fn simulator_regions_are_codegen_placements(
        lens in prop::collection::vec((1u32..400, prop::bool::ANY), 0..8),
        dynamic in prop::option::of(1u32..50_000),
    ) {
        let mut k = KernelBuilder::new("layout", Target::Sm90a);
        for (i, &(len, barrier)) in lens.iter().enumerate() {
            if barrier {
                k.alloc_barriers(&format!("b{i}"), len % 16 + 1);
            } else {
                k.alloc_shared(&format!("d{i}"), Type::F32, len);
            }
        }
        if dynamic.is_some() {
            k.dynamic_shared(Type::F32, 0);
        }
        let k = k.finish().unwrap();
        let dynamic = dynamic.unwrap_or(0);
        let want = k.check_shared_launch(dynamic).unwrap();
        let sim = SmemLayout::new(&k, dynamic);
        for (r, p) in sim.regions.iter().zip(&want.placements) {
            prop_assert_eq!((r.start as u64, r.end as u64), (p.start, p.end), "{}", r.name);
        }
        prop_assert_eq!(sim.static_bytes as u64, want.static_bytes);
        prop_assert_eq!(sim.total as u64, want.total(dynamic));
        if dynamic > 0 {
            prop_assert_eq!(sim.regions.len(), k.shared().len() + 1);
            prop_assert_eq!(sim.dynamic_base as u64, want.dynamic_base);
        } else {
            prop_assert_eq!(sim.regions.len(), k.shared().len());
        }
    }
}
