//! `printf` and inline PTX (`T.printf`, `T.asm`).

use super::kernel_builder::KernelBuilder;
use crate::ir::*;

impl KernelBuilder {
    /// `printf(format, args)`: CUDA's device-side printf (`vprintf`); the simulator prints the
    /// same text. The format's conversions must match the arguments (checked with the kernel).
    #[track_caller]
    pub fn printf(&mut self, format: &str, args: &[Value]) {
        self.push(Inst::Printf(Printf { format: format.to_string(), args: args.to_vec() }));
    }

    /// Inline PTX: `template` with `{i}` naming `inputs[i]` and `{inputs.len() + j}` naming
    /// `outputs[j]` (registers the block writes); `memory`: it reads or writes memory. The
    /// template is checked with the kernel (no lone braces, no module-level directives, every
    /// operand used). The simulator does not execute it: a launch that reaches it stops with
    /// an `unsupported` finding naming its line.
    #[track_caller]
    pub fn inline_asm(&mut self, template: &str, inputs: &[Value], outputs: &[Reg], memory: bool) {
        self.push(Inst::Asm(InlineAsm {
            template: template.to_string(),
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            memory,
        }));
    }
}
