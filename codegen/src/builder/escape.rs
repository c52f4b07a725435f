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

#[cfg(test)]
mod tests {
    use crate::arch::Target;
    use crate::builder::KernelBuilder;
    use crate::ir::{Dim, Type};

    #[test]
    fn inline_ptx_that_hides_the_kernels_names_is_refused_at_its_line() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let t = k.thread_idx(Dim::X);
        let y = k.new_reg(Type::U32);
        let line = line!() + 1;
        k.inline_asm(".reg .b32 %r1; mov.u32 %r1, 5; mov.u32 {1}, {0};", &[t], &[y], false);
        k.inline_asm(".shared .b32 s[4]; mov.u32 {1}, {0};", &[t], &[y], false);
        k.inline_asm("bra $L_wait_1; mov.u32 {1}, {0};", &[t], &[y], false);
        let e = k.finish().unwrap_err();
        let at = |needle: &str| {
            let d =
                e.diagnostics.iter().find(|d| d.message.contains(needle)).unwrap_or_else(|| panic!("{needle}: {e}"));
            d.loc.map(|l| (l.file, l.line))
        };
        assert_eq!(at("declares `.reg %r1`"), Some((file!(), line)));
        assert_eq!(at("declares `.shared` memory"), Some((file!(), line + 1)));
        assert_eq!(at("names `$L_wait_1`"), Some((file!(), line + 2)));
    }
}
