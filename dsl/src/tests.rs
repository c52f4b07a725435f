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
