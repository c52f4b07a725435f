//! Run the mutation suite, print its table and write it to `bench/mutations.md`:
//! `cargo run --release --bin mutations` (`--check` only compares; the test
//! `examples/tests/mutations.rs` does the same).

use clap::Parser;
use phaser_examples::mutate;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(about = "Inject mbarrier-protocol bugs into the gallery's kernels and check the simulator flags each")]
struct Opts {
    /// Where the table goes.
    #[arg(long, default_value = mutate::TABLE_PATH)]
    out: PathBuf,
    /// Do not write: fail when the file differs from this run's table.
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let o = Opts::parse();
    let suite = mutate::run_suite();
    let md = mutate::markdown(&suite);
    println!("{md}");
    let summary = format!("caught {}/{} mutants", suite.caught(), suite.mutants.len());
    if o.check {
        let current = std::fs::read_to_string(&o.out).unwrap_or_default();
        if current != md {
            eprintln!("{summary}; {} is stale: rerun without --check", o.out.display());
            return ExitCode::FAILURE;
        }
        eprintln!("{summary}; {} is current", o.out.display());
    } else {
        if let Err(e) = std::fs::write(&o.out, &md) {
            eprintln!("error: writing {}: {e}", o.out.display());
            return ExitCode::FAILURE;
        }
        eprintln!("{summary}; wrote {}", o.out.display());
    }
    ExitCode::SUCCESS
}
