//! Run the mutation suite and write `bench/mutations.md`:
//! `cargo run --release --example mutations`.

fn main() {
    let suite = phaser::mutate::run_suite();
    let md = phaser::mutate::markdown(&suite);
    println!("{md}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/mutations.md");
    std::fs::write(&path, &md).expect("write bench/mutations.md");
    eprintln!("caught {}/{} mutants; wrote {}", suite.caught(), suite.mutants.len(), path.display());
}
