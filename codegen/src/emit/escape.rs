//! PTX text of `printf` (a `vprintf` call with the arguments in a local buffer) and of
//! inline PTX (the checked template in a block of its own).

use super::operand::*;
use crate::ir::escape::{expand_template, vararg_layout, VarArg};
use crate::ir::*;

/// The prefix of every label the printer emits (`$L_wait_3`, `$L_else_7`, ...).
pub const PRINTER_LABEL_PREFIX: &str = "$L_";

/// What in an inline PTX template would collide with the printer's own names: a `.reg`
/// declaring one of its register names (`%r1`, `%rd<4>`: inside the block it would shadow the
/// kernel's register that an operand substitutes, which ptxas accepts and the GPU then
/// computes wrongly), or a reference to one of its labels (a branch out of the block, or a
/// label that clashes).
pub fn printer_name_problems(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in template.split([';', '{', '}']) {
        let mut words = stmt.split_whitespace();
        if words.next() != Some(".reg") {
            continue;
        }
        let names = words.filter(|w| !w.starts_with('.')).flat_map(|w| w.split(',')).filter(|n| !n.is_empty());
        for name in names {
            let printer_class = REG_CLASSES.iter().any(|(prefix, _)| {
                name.strip_prefix(prefix).is_some_and(|rest| {
                    rest.starts_with('<') || (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
                })
            });
            if printer_class {
                out.push(format!(
                    "the inline PTX template declares `.reg {name}`, a name of the kernel's registers (`%p`, `%rs`, `%r`, \
                     `%rd`, `%f`, `%fd` and a number): inside the block it would hide the kernel's register; name it \
                     otherwise (e.g. `%my{}`)",
                    name.trim_start_matches('%')
                ));
            }
        }
    }
    if let Some(at) = template.find(PRINTER_LABEL_PREFIX) {
        let label: String =
            template[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
        out.push(format!(
            "the inline PTX template names `{label}`, a label of the kernel's own control flow: branch only to labels \
             the template declares, and name them without the `{PRINTER_LABEL_PREFIX}` prefix"
        ));
    }
    out
}

/// The declaration every module with a `printf` carries (CUDA's device-side `vprintf`).
pub const VPRINTF_DECL: &str =
    ".extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);";

/// The `.global` byte array of a format string, NUL-terminated.
pub fn format_global(symbol: &str, format: &str) -> String {
    let bytes: Vec<String> = format.bytes().chain([0]).map(|b| b.to_string()).collect();
    format!(".global .align 1 .b8 {symbol}[{}] = {{{}}};", bytes.len(), bytes.join(", "))
}

/// `printf(format, args)`, the `n`th of its kernel: the arguments are stored into a local
/// buffer as C varargs (f32 promoted to f64, narrow integers and bools to 32 bits), then
/// `vprintf(format, buffer)` is called.
pub fn printf(p: &Printf, format_symbol: &str, n: u32) -> Vec<String> {
    let types: Vec<Type> = p.args.iter().map(|a| a.ty()).collect();
    let (offsets, size) = vararg_layout(&types);
    let buf = format!("phaser_printf_buf_{n}");
    let mut v = vec![
        "{".to_string(),
        format!("\t.local .align 8 .b8 {buf}[{size}];"),
        "\t.reg .b64 %printf_fmt, %printf_args, %printf_d;".into(),
        "\t.reg .b32 %printf_w, %printf_ret;".into(),
        "\t.reg .f32 %printf_s;".into(),
        "\t.reg .f64 %printf_f;".into(),
    ];
    for (a, off) in p.args.iter().zip(&offsets) {
        let at = format!("[{buf}+{off}]");
        match (a.ty(), VarArg::of(a.ty())) {
            (Type::Pred, _) => {
                v.push(format!("\tselp.u32 %printf_w, 1, 0, {};", value(a)));
                v.push(format!("\tst.local.u32 {at}, %printf_w;"));
            }
            (Type::F32, _) => {
                v.push(format!("\tmov.f32 %printf_s, {};", value(a)));
                v.push("\tcvt.f64.f32 %printf_f, %printf_s;".into());
                v.push(format!("\tst.local.f64 {at}, %printf_f;"));
            }
            (Type::F64, _) => {
                v.push(format!("\tmov.f64 %printf_f, {};", value(a)));
                v.push(format!("\tst.local.f64 {at}, %printf_f;"));
            }
            (t, Some(VarArg::Int64)) => {
                v.push(format!("\tmov.b64 %printf_d, {};", value(a)));
                let _ = t;
                v.push(format!("\tst.local.u64 {at}, %printf_d;"));
            }
            (t, _) if t.size() == 2 => {
                // C promotes a 16-bit integer to int: sign- or zero-extend.
                let ext = if t.is_signed() { "s32.s16" } else { "u32.u16" };
                v.push(format!("\tcvt.{ext} %printf_w, {};", value(a)));
                v.push(format!("\tst.local.u32 {at}, %printf_w;"));
            }
            _ => {
                v.push(format!("\tmov.b32 %printf_w, {};", value(a)));
                v.push(format!("\tst.local.u32 {at}, %printf_w;"));
            }
        }
    }
    v.extend([
        format!("\tmov.u64 %printf_args, {buf};"),
        "\tcvta.local.u64 %printf_args, %printf_args;".into(),
        format!("\tmov.u64 %printf_fmt, {format_symbol};"),
        "\tcvta.global.u64 %printf_fmt, %printf_fmt;".into(),
        "\t{".into(),
        "\t.param .b64 param0;".into(),
        "\tst.param.b64 [param0], %printf_fmt;".into(),
        "\t.param .b64 param1;".into(),
        "\tst.param.b64 [param1], %printf_args;".into(),
        "\t.param .b32 retval0;".into(),
        "\tcall.uni (retval0), vprintf, (param0, param1);".into(),
        "\tld.param.b32 %printf_ret, [retval0];".into(),
        "\t}".into(),
        "}".into(),
    ]);
    v
}

/// Inline PTX in a block of its own (so its `.reg` declarations and labels stay local).
pub fn inline_asm(a: &InlineAsm) -> Vec<String> {
    let operands: Vec<String> = a.inputs.iter().map(value).chain(a.outputs.iter().map(|r| reg(*r))).collect();
    let body = expand_template(&a.template, &operands);
    let mut v = vec!["{ // inline PTX".to_string()];
    v.extend(body.lines().map(|l| l.trim()).filter(|l| !l.is_empty()).map(|l| format!("\t{l}")));
    v.push("}".into());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_ptx_cannot_shadow_the_printers_registers_or_use_its_labels() {
        // ptxas accepted this; the GPU stored 5 and never read the input.
        let p = printer_name_problems(".reg .b32 %r1; mov.u32 %r1, 5; mov.u32 {1}, {0};");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("the inline PTX template declares `.reg %r1`, a name of the kernel's registers"));
        assert_eq!(printer_name_problems("{{ .reg .pred %p<3>; }}").len(), 1);
        assert_eq!(printer_name_problems(".reg .b64 %rd7, %mine;").len(), 1);
        assert_eq!(printer_name_problems(".reg .f32 %fd2;").len(), 1, "any class, whatever the declared type");
        assert!(printer_name_problems(".reg .b32 %my_r1, %rx, %r; .reg .pred p; add.u32 {2}, {0}, {1};").is_empty());
        let p = printer_name_problems("@%p1 bra $L_else_3;");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("names `$L_else_3`, a label of the kernel's own control flow"), "{p:?}");
        assert!(printer_name_problems("{{ .reg .pred q; setp.eq.u32 q, {0}, 0; @q bra DONE; DONE: }}").is_empty());
    }
}
