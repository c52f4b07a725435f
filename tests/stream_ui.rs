//! Compile-fail cases of the stream API: safe code cannot read, write or free a buffer while a
//! launch that uses it is in flight, nor drop the stream under it. Snapshots are in
//! `tests/ui_stream/*.stderr` (`TRYBUILD=overwrite cargo test --test stream_ui`; review them).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_stream/*.rs");
}
