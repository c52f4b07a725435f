//! Run the mutation suite, print its table and write it to `bench/mutations.md`:
//! `cargo run --release --bin mutations` (`--check` only compares; the test
//! `examples/tests/mutations.rs` does the same). `--sites KERNEL` lists the instructions of a
//! subject that a mutant can name; `--only TEXT` runs the mutants of kernels whose name
//! contains TEXT and prints their findings (for writing mutants).

use clap::Parser;
use phaser_examples::mutate;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(about = "Inject mbarrier-protocol bugs into the gallery's kernels and check the simulator names each")]
struct Opts {
    /// Where the table goes.
    #[arg(long, default_value = mutate::TABLE_PATH)]
    out: PathBuf,
    /// Do not write: fail when the file differs from this run's table.
    #[arg(long)]
    check: bool,
    /// List the instructions of this subject a mutant can name, and exit.
    #[arg(long)]
    sites: Option<String>,
    /// Run only the mutants of subjects whose name contains this, print the table, write nothing.
    #[arg(long)]
    only: Option<String>,
    /// Print the simulator's full reports, under every schedule, of mutant N (from 0) of the
    /// subject `KERNEL` (`KERNEL:N`), or of the unmutated kernel (`KERNEL`).
    #[arg(long, value_name = "KERNEL[:N]")]
    report: Option<String>,
}

fn main() -> ExitCode {
    let o = Opts::parse();
    if let Some(name) = &o.sites {
        let Some(s) = mutate::subject(name) else {
            eprintln!("error: no subject `{name}`");
            return ExitCode::FAILURE;
        };
        match s.kernel() {
            Ok(k) => mutate::sites(&k).iter().for_each(|l| println!("{l}")),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }
    if let Some(spec) = &o.report {
        let (name, n) = match spec.split_once(':') {
            Some((a, b)) => (a, b.parse::<usize>().ok()),
            None => (spec.as_str(), None),
        };
        let Some(s) = mutate::subject(name) else {
            eprintln!("error: no subject `{name}`");
            return ExitCode::FAILURE;
        };
        let k = match s.kernel() {
            Ok(k) => k,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let k = match n {
            None => k,
            Some(n) => {
                let list: Vec<_> = mutate::mutants().into_iter().filter(|m| m.subject == name).collect();
                let Some(m) = list.get(n) else {
                    eprintln!("error: `{name}` has {} mutants", list.len());
                    return ExitCode::FAILURE;
                };
                println!("mutant: {} {}, expected {}", m.site, m.mutator.describe(), m.expect);
                match mutate::make_mutant(m, &k) {
                    Ok((k, _)) => k,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        };
        for sc in mutate::schedules() {
            match s.simulate(&k, &sc) {
                Ok(r) => println!("{r}"),
                Err(e) => println!("error under {} seed {}: {e}", sc.strategy.name(), sc.seed),
            }
        }
        return ExitCode::SUCCESS;
    }
    if let Some(only) = &o.only {
        let list: Vec<_> = mutate::mutants().into_iter().filter(|m| m.subject.contains(only.as_str())).collect();
        let suite = mutate::run(&list, false);
        println!("{}", mutate::markdown(&suite));
        return ExitCode::SUCCESS;
    }
    let suite = mutate::run_suite();
    let md = mutate::markdown(&suite);
    println!("{md}");
    let summary = format!(
        "caught {}/{} mutants, {}/{} kernels clean",
        suite.caught(),
        suite.mutants.len(),
        suite.clean_count(),
        suite.clean.len()
    );
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
