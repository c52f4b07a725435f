//! Run the mutation suite and write `bench/mutations.md`:
//! `cargo run --release --bin mutations`.

fn main() {
    let suite = phaser_examples::mutate::run_suite();
    let md = phaser_examples::mutate::markdown(&suite);
    println!("{md}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/mutations.md");
    std::fs::write(&path, &md).expect("write bench/mutations.md");
    eprintln!("caught {}/{} mutants; wrote {}", suite.caught(), suite.mutants.len(), path.display());
}
