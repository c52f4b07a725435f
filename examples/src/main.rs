//! `phaser`: the gallery's command line. It is `phaser::cli::main()` over what this program
//! registers: every `#[phaser::kernel]` of the project (the macro registers each) and the
//! gallery's runnable examples (registered here, with their host setups and checks).

phaser::registry::submit!(phaser::registry::Examples(phaser_examples::gallery::registered));

fn main() -> std::process::ExitCode {
    phaser::cli::main()
}

// The op zoo: one kernel using every op form of its target (for PTX dumps and ptxas).
phaser::registry::submit!(phaser::registry::KernelEntry {
    name: "op_zoo",
    target: phaser::Target::Sm90a,
    comptime: &[],
    location: (file!(), line!()),
    build: |target, _| phaser::codegen::zoo::op_zoo(target),
});
