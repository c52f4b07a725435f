//! `printf` in the simulator: the same text CUDA's device `vprintf` prints, formatted as C's
//! `printf` formats it (the conversions `phaser_codegen::ir::escape::parse_format` accepts),
//! collected in execution order in the report and echoed to stdout after the launch.

use crate::report::PrintRecord;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::warp::lanes;
use phaser_codegen::ir::escape::{parse_format, Conversion, Piece, VarArg};
use phaser_codegen::ir::{Printf, Type};

impl<C: Checker> Engine<'_, C> {
    pub(crate) fn exec_printf(&mut self, wi: usize, mask: u32, p: &Printf) {
        for l in lanes(mask) {
            let args: Vec<(u64, Type)> = p.args.iter().map(|a| (self.val(wi, l, a), a.ty())).collect();
            let text = format_c(&p.format, &args);
            let thread = self.cluster_thread(wi, l) % self.exec.threads_per_cta;
            let ctaid = self.exec.ctas[self.exec.warps[wi].cta].ctaid;
            self.out.printed.push(PrintRecord { ctaid, thread, text });
        }
    }
}

/// `format` with `args` (register bits and types) as C's `printf` prints it. The kernel check
/// has matched the conversions with the arguments; a mismatch left here prints `?`.
pub fn format_c(format: &str, args: &[(u64, Type)]) -> String {
    let Ok(pieces) = parse_format(format) else { return format.to_string() };
    let mut out = String::new();
    let mut next = args.iter();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(&t),
            Piece::Conv(c) => match next.next() {
                Some(&(bits, ty)) => out.push_str(&conversion(&c, bits, ty)),
                None => out.push('?'),
            },
        }
    }
    out
}

/// One argument as C receives it through varargs: a promoted integer or a double.
enum Arg {
    Int(i64, u64),
    Double(f64),
}

fn promote(bits: u64, ty: Type) -> Arg {
    match (ty, VarArg::of(ty)) {
        (Type::F32, _) => Arg::Double(f32::from_bits(bits as u32) as f64),
        (Type::F64, _) => Arg::Double(f64::from_bits(bits)),
        (_, Some(VarArg::Int64)) => Arg::Int(bits as i64, bits),
        (t, _) if t.size() == 2 && t.is_signed() => {
            Arg::Int(bits as u16 as i16 as i64, bits as u16 as i16 as i32 as u32 as u64)
        }
        _ => Arg::Int(bits as u32 as i32 as i64, bits & 0xFFFF_FFFF),
    }
}

fn conversion(c: &Conversion, bits: u64, ty: Type) -> String {
    let has = |f: char| c.flags.contains(f);
    let (body, numeric) = match (c.conv, promote(bits, ty)) {
        ('d' | 'i', Arg::Int(i, _)) => {
            let i = if c.long { i } else { i as i32 as i64 };
            (with_sign(digits(i.unsigned_abs(), 10, false, c.precision), i < 0, has('+'), has(' ')), true)
        }
        ('u', Arg::Int(_, u)) => (digits(width(u, c.long), 10, false, c.precision), true),
        ('x' | 'X', Arg::Int(_, u)) => {
            let u = width(u, c.long);
            let d = digits(u, 16, c.conv == 'X', c.precision);
            let prefix = if has('#') && u != 0 {
                if c.conv == 'X' {
                    "0X"
                } else {
                    "0x"
                }
            } else {
                ""
            };
            (format!("{prefix}{d}"), true)
        }
        ('o', Arg::Int(_, u)) => {
            let d = digits(width(u, c.long), 8, false, c.precision);
            (if has('#') && !d.starts_with('0') { format!("0{d}") } else { d }, true)
        }
        ('c', Arg::Int(_, u)) => (((u & 0xFF) as u8 as char).to_string(), false),
        ('p', Arg::Int(_, u)) => (format!("0x{u:x}"), false),
        ('f' | 'F' | 'e' | 'E' | 'g' | 'G', Arg::Double(x)) => (float(c, x), x.is_finite()),
        _ => ("?".to_string(), false),
    };
    pad(c, body, numeric)
}

/// A 32-bit conversion (no `l`) sees the low 32 bits.
fn width(u: u64, long: bool) -> u64 {
    if long {
        u
    } else {
        u & 0xFFFF_FFFF
    }
}

/// `u` in `radix` with at least `precision` digits (precision 0 and value 0: no digits).
fn digits(u: u64, radix: u32, upper: bool, precision: Option<usize>) -> String {
    let mut s = match radix {
        16 if upper => format!("{u:X}"),
        16 => format!("{u:x}"),
        8 => format!("{u:o}"),
        _ => u.to_string(),
    };
    match precision {
        Some(0) if u == 0 => s.clear(),
        Some(p) if s.len() < p => s = format!("{}{s}", "0".repeat(p - s.len())),
        _ => {}
    }
    s
}

fn with_sign(body: String, negative: bool, plus: bool, space: bool) -> String {
    let sign = if negative {
        "-"
    } else if plus {
        "+"
    } else if space {
        " "
    } else {
        ""
    };
    format!("{sign}{body}")
}

/// Pad to the field width: left with `-`, zeros after the sign or `0x` with `0` (numbers
/// without a precision), spaces otherwise.
fn pad(c: &Conversion, body: String, numeric: bool) -> String {
    let Some(w) = c.width else { return body };
    let n = body.chars().count();
    if n >= w {
        return body;
    }
    let fill = w - n;
    if c.flags.contains('-') {
        return format!("{body}{}", " ".repeat(fill));
    }
    let int = "diuxXo".contains(c.conv);
    if c.flags.contains('0') && numeric && !(int && c.precision.is_some()) {
        let b = body.as_bytes();
        let mut split = 0;
        if matches!(b.first(), Some(b'-' | b'+' | b' ')) {
            split += 1;
        }
        if b.len() >= split + 2 && b[split] == b'0' && matches!(b[split + 1], b'x' | b'X') {
            split += 2;
        }
        let (head, tail) = body.split_at(split);
        return format!("{head}{}{tail}", "0".repeat(fill));
    }
    format!("{}{body}", " ".repeat(fill))
}

/// `%f`, `%e`, `%g` of a double, as glibc prints them (exact decimal rounding).
fn float(c: &Conversion, x: f64) -> String {
    let upper = c.conv.is_ascii_uppercase();
    let sign = |neg: bool| with_sign(String::new(), neg, c.flags.contains('+'), c.flags.contains(' '));
    if !x.is_finite() {
        let s = if x.is_nan() { "nan" } else { "inf" };
        let s = if upper { s.to_uppercase() } else { s.to_string() };
        return format!("{}{s}", sign(x.is_sign_negative()));
    }
    let neg = x.is_sign_negative();
    let a = x.abs();
    let p = c.precision.unwrap_or(6);
    let alt = c.flags.contains('#');
    let body = match c.conv.to_ascii_lowercase() {
        'f' => fixed(a, p, alt),
        'e' => sci(a, p, alt),
        _ => {
            let p = if p == 0 { 1 } else { p };
            let (_, exp) = sci_parts(a, p - 1);
            let s = if (exp as i64) < p as i64 && exp >= -4 {
                fixed(a, (p as i64 - 1 - exp as i64) as usize, alt)
            } else {
                sci(a, p - 1, alt)
            };
            if alt {
                s
            } else {
                strip_zeros(&s)
            }
        }
    };
    let body = if upper { body.to_uppercase() } else { body };
    format!("{}{body}", sign(neg))
}

fn fixed(a: f64, p: usize, alt: bool) -> String {
    let s = format!("{a:.p$}");
    if alt && p == 0 {
        format!("{s}.")
    } else {
        s
    }
}

/// The mantissa digits (`d.ddd`) and decimal exponent of `a` rounded to `p` fraction digits.
fn sci_parts(a: f64, p: usize) -> (String, i32) {
    let s = format!("{a:.p$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.to_string(), e.parse().unwrap_or(0))
}

fn sci(a: f64, p: usize, alt: bool) -> String {
    let (m, e) = sci_parts(a, p);
    let m = if alt && p == 0 { format!("{m}.") } else { m };
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// `%g` without `#`: no trailing zeros in the fraction, no trailing point.
fn strip_zeros(s: &str) -> String {
    let (m, e) = match s.find('e') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
    format!("{m}{e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f(fmt: &str, args: &[(u64, Type)]) -> String {
        format_c(fmt, args)
    }
    fn u(v: u32) -> (u64, Type) {
        (v as u64, Type::U32)
    }
    fn i(v: i32) -> (u64, Type) {
        (v as u32 as u64, Type::S32)
    }
    fn x(v: f32) -> (u64, Type) {
        (v.to_bits() as u64, Type::F32)
    }

    #[test]
    fn integers_print_as_c_prints_them() {
        assert_eq!(
            f("%d|%5d|%-5d|%05d|%+d|% d", &[i(-7), i(42), i(42), i(-42), i(3), i(3)]),
            "-7|   42|42   |-0042|+3| 3"
        );
        assert_eq!(
            f("%u %x %X %#x %o %#o", &[u(4000000000), u(255), u(255), u(255), u(8), u(8)]),
            "4000000000 ff FF 0xff 10 010"
        );
        assert_eq!(f("%d", &[u(u32::MAX)]), "-1", "a u32 printed with %d is reinterpreted, as in C");
        assert_eq!(f("%.3d|%8.3d|%.0d", &[i(5), i(-5), i(0)]), "005|    -005|");
        assert_eq!(
            f("%lu %ld %llx", &[(u64::MAX, Type::U64), (-2i64 as u64, Type::S64), (1 << 40, Type::U64)]),
            "18446744073709551615 -2 10000000000"
        );
        assert_eq!(f("%c%c", &[u(72), u(105)]), "Hi");
        assert_eq!(f("%d", &[(0xFFFF, Type::S16)]), "-1", "i16 is sign-extended by promotion");
        assert_eq!(f("%u", &[(1, Type::Pred)]), "1");
        assert_eq!(f("100%% done\n", &[]), "100% done\n");
    }

    #[test]
    fn floats_print_as_glibc_prints_them() {
        assert_eq!(
            f("%f %.2f %8.3f %-8.1f|", &[x(1.5), x(3.14259), x(-2.5), x(0.25)]),
            "1.500000 3.14   -2.500 0.2     |"
        );
        assert_eq!(f("%e %.2E", &[x(12345.678), x(0.000123)]), "1.234568e+04 1.23E-04");
        assert_eq!(
            f("%g %g %g %g %g", &[x(100000.0), x(1000000.0), x(0.0001), x(0.00001), x(1.5)]),
            "100000 1e+06 0.0001 1e-05 1.5"
        );
        assert_eq!(f("%.3g %#g %g", &[x(3.14259), x(2.0), x(0.0)]), "3.14 2.00000 0");
        assert_eq!(
            f("%f %f %F %08.2f", &[x(f32::INFINITY), x(-f32::INFINITY), x(f32::NAN), x(-1.5)]),
            "inf -inf NAN -0001.50"
        );
        assert_eq!(f("%f", &[(0.1f64.to_bits(), Type::F64)]), "0.100000");
        assert_eq!(f("%.0f %.0f %.0f", &[x(0.5), x(1.5), x(2.5)]), "0 2 2", "round half to even, exactly");
    }

    proptest! {
        #[test]
        fn decimal_integers_round_trip(v: i32, w in 0usize..12) {
            let s = f(&format!("%{w}d"), &[i(v)]);
            prop_assert_eq!(s.trim().parse::<i32>().unwrap(), v);
            prop_assert!(s.len() >= w);
        }

        #[test]
        fn fixed_floats_match_rust_exact_rounding(v in -1.0e6f32..1.0e6, p in 0usize..9) {
            prop_assert_eq!(f(&format!("%.{p}f"), &[x(v)]), format!("{:.p$}", v as f64));
        }
    }
}
