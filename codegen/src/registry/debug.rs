//! Clocks, `nanosleep`, `printf`, programmatic dependent launch and inline PTX.

/// What an inline PTX block may touch besides its operands.
const CLOBBERS: super::Choice<bool> = choice!["memory" => true, "none" => false];

ops! {
    /// the SM's 64-bit cycle counter (`%clock64`)
    "clock64" () -> U64 = |k, call| k.clock64();
    /// the GPU's 64-bit nanosecond timer (`%globaltimer`)
    "globaltimer" () -> U64 = |k, call| k.globaltimer();
    /// suspend this thread for about `ns` nanoseconds (`nanosleep`: a backoff hint that orders nothing)
    "nanosleep" ["cuda:__nanosleep"] (ns: U32 = 100) -> Unit = |k, call| k.nanosleep(ns);
    /// C `printf` through CUDA's `vprintf` (`%d %u %x %f %e %g %ld %lu ..`); the simulator prints the same text
    "printf" (format: Tag as "x = %u\n", args: Values) -> Unit = |k, call| k.printf(format, &args);
    /// wait until the grids this launch depends on (programmatic dependent launch) completed
    "ptx.griddepcontrol.wait" ["cuda:cudaGridDependencySynchronize"] () -> Unit = |k, call| k.griddep_wait();
    /// let the launch that depends on this one start (its `griddepcontrol.wait` still waits for this grid)
    "ptx.griddepcontrol.launch_dependents" ["cuda:cudaTriggerProgrammaticLaunchCompletion"] () -> Unit
        = |k, call| k.griddep_launch_dependents();
    /// inline PTX: `{0}`.. name `inputs` then `outputs` (`let mut` variables); not run by the simulator
    "asm" (template: Tag as "add.u32 {1}, {0}, 1;", inputs: Values, outputs: Places; clobbers: Choice(CLOBBERS)) -> Unit
        = |k, call| k.inline_asm(template, &inputs, &outputs, clobbers);
}
