//! The DSL's documents and tests follow the op registry.

use phaser_codegen::registry;

#[test]
fn readme_table_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let (begin, end) = ("<!-- op-table-begin -->\n", "<!-- op-table-end -->");
    let a = readme.find(begin).expect("begin marker") + begin.len();
    let b = readme.find(end).expect("end marker");
    let table = registry::markdown_table();
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
    let missing: Vec<&str> = registry::ops()
        .map(|o| o.path)
        .filter(|p| !src.contains(&format!("T.{p}(")) && !src.contains(&format!("T.{p}::<")))
        .collect();
    assert!(missing.is_empty(), "ops not used in tests/dsl_ops.rs: {missing:?}");
}

#[test]
fn a_warp_level_typo_never_suggests_a_cta_barrier() {
    use crate::check::ops::op_suggestion;
    // `__syncwarp` spelled as users do: each gets the warp barrier, never `T.cuda.cta_sync`
    // (a `bar.sync 0` inside a warp-specialized branch deadlocks the other warps).
    for unknown in [
        "syncwarp",
        "__syncwarp",
        "cuda.syncwarp",
        "cuda.__syncwarp",
        "warp_sync",
        "cuda.warpsync",
        "sync_warp",
        "cuda.sync_warp",
        "warp_barrier",
    ] {
        let help = op_suggestion(unknown);
        assert!(help.contains("`T.cuda.warp_sync`"), "{unknown}: {help}");
        assert!(!help.contains("cta_sync") && !help.contains("bar.sync"), "{unknown}: {help}");
    }
    // Other libraries' spellings of the new ops.
    assert!(op_suggestion("__shfl_xor_sync").contains("`T.ptx.shfl.sync.bfly`"));
    assert!(op_suggestion("mbarrier.wait").contains("`T.ptx.mbarrier.try_wait`"));
    assert!(op_suggestion("wait_barrier").contains("`T.cute.wait_barrier`"));
    assert!(op_suggestion("cudaGridDependencySynchronize").contains("`T.ptx.griddepcontrol.wait`"));
    // A CTA-level typo still gets the CTA barrier.
    assert!(op_suggestion("cuda.cta_synk").contains("`T.cuda.cta_sync`"));
}
