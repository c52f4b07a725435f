//! The `phaser` command line, over what the program registered ([`crate::registry`]): its
//! `#[phaser::kernel]`s and its runnable examples. A crate gets the whole tool with
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     phaser::cli::main()
//! }
//! ```
//!
//! Commands: `list`, `emit`, `check`, `run`, `trace`, `bench`, `diff` (`--help` on each).
//! `--json` prints one JSON document on stdout for scripts; human output is colored and
//! aligned when stdout is a terminal, and long work shows a progress bar on stderr.
//!
//! Exit codes (also in `--help`):
//! - 0: everything passed;
//! - 1: a check failed: wrong outputs, a simulator finding, a kernel that does not build or
//!   assemble, a GPU fault;
//! - 2: bad usage (unknown option, unknown kernel or example, bad `--comptime`);
//! - 3: the backend asked for is not there (`--backend gpu` or `diff` without a GPU);
//! - 4: an output could not be written.

mod commands;
mod out;

use crate::registry::Size;
use clap::{Parser, Subcommand, ValueEnum};
use phaser_codegen::Target;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status: everything passed.
pub const EXIT_OK: u8 = 0;
/// Exit status: a check failed, a finding, a build or assembly error, a GPU fault.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: bad usage.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: the backend asked for is not available.
pub const EXIT_NO_BACKEND: u8 = 3;
/// Exit status: an output could not be written.
pub const EXIT_IO: u8 = 4;

const EXIT_HELP: &str = "Exit codes: 0 all passed; 1 a check failed (wrong output, simulator finding, build or \
ptxas error, GPU fault); 2 bad usage; 3 backend not available; 4 output not written.";

#[derive(Parser)]
#[command(name = "phaser", about = "Phaser: mbarrier pipelines in Rust — list, emit, check, run, trace and benchmark kernels", after_help = EXIT_HELP)]
struct Cli {
    /// One JSON document on stdout instead of human output.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The GPU when one is present, otherwise the simulator.
    Auto,
    Gpu,
    Sim,
}

#[derive(clap::Args, Clone, Debug)]
pub(crate) struct Selection {
    /// Only examples whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// `--only` names one example exactly (not a substring).
    #[arg(long, requires = "only")]
    exact: bool,
    /// Fix the random inputs' seed (otherwise each run draws fresh inputs and prints its seed).
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the registered kernels (`#[phaser::kernel]`) and runnable examples.
    List,
    /// Write PTX (and with --cubin or --cubin-dir, ptxas cubins) of registered kernels and examples' kernels.
    Emit {
        /// Only this kernel (a registered kernel, or the kernels of that name the examples launch).
        #[arg(long)]
        kernel: Option<String>,
        /// A `#[comptime]` value, `NAME=VALUE` (repeatable).
        #[arg(long = "comptime", value_name = "NAME=VALUE")]
        comptime: Vec<String>,
        /// Target (default: each kernel's own; sm_90a for the examples' kernels).
        #[arg(long)]
        target: Option<Target>,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Also assemble each file with ptxas (with line info) into a `.cubin`.
        #[arg(long)]
        cubin: bool,
        /// Also assemble each kernel with ptxas into DIR under the name the runtime looks up
        /// (`<SHA-256 of the PTX>.<target>.cubin`): ship DIR and set `PHASER_CUBIN_DIR=DIR` to
        /// load the kernels without JIT.
        #[arg(long, value_name = "DIR")]
        cubin_dir: Option<PathBuf>,
    },
    /// Run every example in the simulator with the protocol checker; any finding or wrong
    /// output fails.
    Check {
        #[command(flatten)]
        sel: Selection,
        /// Explore every interleaving of each launch that matters (`Device::explore`: DPOR over
        /// warps, async copies, tensor-core work and the cluster's CTAs) at the smallest sizes,
        /// instead of one sampled schedule. One-cluster launches only.
        #[arg(long)]
        exhaustive: bool,
        /// With `--exhaustive`: executions per launch at most (the report says when it is hit).
        #[arg(long, requires = "exhaustive")]
        max_executions: Option<u64>,
        /// With `--exhaustive`: explore only the synchronization skeleton (`SimConfig::
        /// explore_barriers_only` and `SimConfig::skeleton`): orders of plain data are left to
        /// the race checker and MMAs run without their math; the outputs come from one more run
        /// with it.
        #[arg(long, requires = "exhaustive")]
        barriers_only: bool,
        /// Replay the step schedule in FILE (a counterexample's, as `--exhaustive` prints it)
        /// instead of a sampled one; with `--only NAME --exact`.
        #[arg(long, value_name = "FILE", conflicts_with = "exhaustive", requires = "exact")]
        schedule: Option<PathBuf>,
    },
    /// Run every example and check it against its reference (the GPU when present).
    Run {
        #[arg(long, value_enum, default_value_t = Backend::Auto)]
        backend: Backend,
        /// Full-size problems (default on a GPU); the simulator uses quick sizes.
        #[arg(long, conflicts_with = "quick")]
        full: bool,
        /// Quick sizes even on a GPU (small, ragged shapes).
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        sel: Selection,
        /// Simulator only: write each launch's Perfetto trace and probe tables into this directory.
        #[arg(long)]
        trace_dir: Option<PathBuf>,
    },
    /// Simulate every example and write each launch's Perfetto trace (`.trace.json`, opens
    /// in ui.perfetto.dev) and probe tables (`.probes.txt`) into DIR.
    Trace {
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        sel: Selection,
    },
    /// Time every example: repeated runs, kernel time on the GPU (wall time in the simulator).
    Bench {
        #[arg(long, value_enum, default_value_t = Backend::Auto)]
        backend: Backend,
        /// Runs per example (at least 1).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// Quick sizes even on a GPU.
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        sel: Selection,
    },
    /// Differential check: every example on the GPU and in the simulator with the same inputs
    /// (quick sizes); all outputs must be bit-identical.
    Diff {
        #[arg(long)]
        seed: Option<u64>,
    },
    /// `phaser emit --out DIR` for the whole project, the older spelling (`--check`: assemble).
    #[command(hide = true)]
    Ptx {
        dir: PathBuf,
        #[arg(long, default_value = "sm_90a")]
        target: Target,
        #[arg(long)]
        check: bool,
    },
}

/// Parse the process's arguments and run; the exit code is documented in the module.
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// [`main`] over given arguments (the first is the program name).
pub fn main_from<I: IntoIterator<Item = T>, T: Into<OsString> + Clone>(args: I) -> ExitCode {
    ExitCode::from(run(args))
}

/// Run the command line `args` (the first is the program name); the exit status.
pub fn run<I: IntoIterator<Item = T>, T: Into<OsString> + Clone>(args: I) -> u8 {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            if !e.use_stderr() {
                return EXIT_OK;
            }
            // A script that asked for JSON gets a document for a usage error too.
            if args.iter().skip(1).any(|a| a == "--json") {
                out::Out::new(true)
                    .json(serde_json::json!({ "error": e.render().to_string().trim(), "exit": EXIT_USAGE }));
            }
            return EXIT_USAGE;
        }
    };
    let o = out::Out::new(cli.json);
    match cli.cmd {
        Cmd::List => commands::list(&o),
        Cmd::Emit { kernel, comptime, target, out, cubin, cubin_dir } => {
            let assemble = commands::Assemble { cubin, cubin_dir, check: false };
            commands::emit(&o, kernel.as_deref(), &comptime, target, &out, &assemble)
        }
        Cmd::Ptx { dir, target, check } => {
            let assemble = commands::Assemble { cubin: false, cubin_dir: None, check };
            commands::emit(&o, None, &[], Some(target), &dir, &assemble)
        }
        Cmd::Check { sel, exhaustive, max_executions, barriers_only, schedule } => {
            let explore = commands::Explore { on: exhaustive, max_executions, barriers_only };
            commands::check(&o, &sel, explore, schedule.as_deref())
        }
        Cmd::Run { backend, full, quick, sel, trace_dir } => commands::run(&o, backend, full, quick, &sel, trace_dir),
        Cmd::Trace { out, sel } => commands::trace(&o, &out, &sel),
        Cmd::Bench { backend, runs, quick, sel } => commands::bench(&o, backend, runs, quick, &sel),
        Cmd::Diff { seed } => commands::diff(&o, seed),
    }
}

/// `--full`/`--quick` and the device decide the problem size.
pub(crate) fn size(full: bool, quick: bool, gpu: bool) -> Size {
    if !quick && (full || gpu) {
        Size::Full
    } else {
        Size::Quick
    }
}
