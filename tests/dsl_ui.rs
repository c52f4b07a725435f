//! Compile-fail UI tests of `#[phaser::kernel]`: each case's error must point at the offending
//! tokens, name the problem and suggest a fix. Snapshots are in `tests/ui/*.stderr`
//! (`TRYBUILD=overwrite cargo test --test dsl_ui` regenerates them; review every one).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
