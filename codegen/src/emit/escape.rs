//! PTX text of `printf` (a `vprintf` call with the arguments in a local buffer) and of
//! inline PTX (the checked template in a block of its own).

use super::operand::*;
use crate::ir::escape::{expand_template, vararg_layout, VarArg};
use crate::ir::*;

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
