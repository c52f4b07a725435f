//! Leaving the typed instruction set: `printf` (CUDA's device `vprintf`) and inline PTX.
//!
//! Both carry user text into the PTX. A format string is emitted as bytes of a `.global`
//! array, so any character is safe there. An inline PTX template goes in verbatim, so it is
//! checked first ([`template_problems`]): it may not contain what would end the instruction
//! block or the kernel (an unbalanced `}`), declare module-level things (`.entry`, `.func`,
//! ...), or hide text from the printer (comments, quotes, control characters).

use super::types::Type;
use super::value::{Reg, Value};

/// `printf(format, args..)`: the GPU formats it with `vprintf` (arguments promoted as C
/// varargs: f32 to f64, 16-bit integers and bools to 32-bit); the simulator formats the same.
#[derive(Clone, Debug, PartialEq)]
pub struct Printf {
    pub format: String,
    pub args: Vec<Value>,
}

/// Inline PTX: `template` with `{0}`, `{1}`, .. naming the operands (inputs first, then
/// outputs, in call order) and `{{`/`}}` for literal braces.
#[derive(Clone, Debug, PartialEq)]
pub struct InlineAsm {
    pub template: String,
    pub inputs: Vec<Value>,
    pub outputs: Vec<Reg>,
    /// The `"memory"` clobber: the block reads or writes memory.
    pub memory: bool,
}

// ---- printf formats -------------------------------------------------------------------

/// A `%` conversion of a format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// `-`, `+`, ` `, `#`, `0`, in any order.
    pub flags: String,
    pub width: Option<usize>,
    pub precision: Option<usize>,
    /// `l` or `ll`: a 64-bit integer.
    pub long: bool,
    /// `d i u x X o c f F e E g G p`.
    pub conv: char,
}

/// A format string in pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Conv(Conversion),
}

/// What a value is passed as through `vprintf`'s argument buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarArg {
    /// 4 bytes: 32-bit and narrower integers, bools (C's integer promotion).
    Int32,
    /// 8 bytes: 64-bit integers.
    Int64,
    /// 8 bytes: an f64 (f32 is promoted).
    Double,
}

impl VarArg {
    /// How a value of `ty` is passed; `None` for half types (no C vararg form).
    pub fn of(ty: Type) -> Option<VarArg> {
        match ty {
            Type::F16 | Type::BF16 => None,
            Type::F32 | Type::F64 => Some(VarArg::Double),
            t if t.size() == 8 => Some(VarArg::Int64),
            _ => Some(VarArg::Int32),
        }
    }
    pub fn size(self) -> u32 {
        match self {
            VarArg::Int32 => 4,
            _ => 8,
        }
    }
}

/// Byte offsets of the arguments in the argument buffer (each aligned to its size), and the
/// buffer's size (a multiple of 8, at least 8).
pub fn vararg_layout(types: &[Type]) -> (Vec<u32>, u32) {
    let mut off = 0u32;
    let mut offsets = Vec::new();
    for &t in types {
        let size = VarArg::of(t).map_or(4, VarArg::size);
        off = off.next_multiple_of(size);
        offsets.push(off);
        off += size;
    }
    (offsets, off.next_multiple_of(8).max(8))
}

/// The largest field width or precision a `printf` conversion may ask for. C sets none, but
/// each field is formatted in memory (by the simulator, and by the GPU's `vprintf` into its
/// 1 MiB buffer), so a user's number must not size an allocation without a bound.
pub const PRINTF_MAX_FIELD: usize = 65535;

/// Split a format string into text and conversions. A NUL ends the format, as it ends the C
/// string the GPU's `vprintf` reads: nothing after it prints.
pub fn parse_format(fmt: &str) -> Result<Vec<Piece>, String> {
    let fmt = fmt.split('\0').next().unwrap_or("");
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            text.push('%');
            continue;
        }
        let mut spec = String::from("%");
        let mut flags = String::new();
        while let Some(&f) = chars.peek() {
            if "-+ #0".contains(f) {
                flags.push(f);
                spec.push(f);
                chars.next();
            } else {
                break;
            }
        }
        let number = |chars: &mut std::iter::Peekable<std::str::Chars>, spec: &mut String| {
            let mut n = String::new();
            while let Some(&d) = chars.peek() {
                if d.is_ascii_digit() {
                    n.push(d);
                    spec.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            n
        };
        if chars.peek() == Some(&'*') {
            return Err("`*` widths and precisions are not supported; write the number".into());
        }
        // A width or precision within PRINTF_MAX_FIELD (digits past any usize included).
        let field = |digits: &str, what: &str, spec: &str| -> Result<usize, String> {
            match digits.parse::<usize>() {
                Ok(n) if n <= PRINTF_MAX_FIELD => Ok(n),
                _ => Err(format!("the {what} {digits} in `{spec}` exceeds the limit of {PRINTF_MAX_FIELD}")),
            }
        };
        let w = number(&mut chars, &mut spec);
        let width = if w.is_empty() { None } else { Some(field(&w, "field width", &spec)?) };
        let mut precision = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.push('.');
            if chars.peek() == Some(&'*') {
                return Err("`*` widths and precisions are not supported; write the number".into());
            }
            let p = number(&mut chars, &mut spec);
            // `%.f`: an empty precision is 0, as in C.
            precision = Some(if p.is_empty() { 0 } else { field(&p, "precision", &spec)? });
        }
        let mut long = false;
        while let Some(&l) = chars.peek() {
            match l {
                'l' => {
                    long = true;
                    spec.push('l');
                    chars.next();
                }
                'h' | 'z' | 'j' | 't' | 'L' | 'q' => {
                    return Err(format!("length modifier `{l}` in `{spec}{l}` is not supported (use `l` for 64-bit)"))
                }
                _ => break,
            }
        }
        let Some(conv) = chars.next() else {
            return Err(format!("the format ends inside the conversion `{spec}`"));
        };
        spec.push(conv);
        if !"diuxXocfFeEgGp".contains(conv) {
            let why = match conv {
                's' => "kernels have no strings to print",
                'n' => "it writes memory",
                _ => "it is not a printf conversion",
            };
            return Err(format!("`{spec}` is not supported: {why}"));
        }
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(&mut text)));
        }
        out.push(Piece::Conv(Conversion { flags, width, precision, long, conv }));
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// What is wrong with printing `args` (of these types) with `fmt`.
pub fn format_problems(fmt: &str, args: &[Type]) -> Vec<String> {
    let pieces = match parse_format(fmt) {
        Ok(p) => p,
        Err(e) => return vec![format!("printf format: {e}")],
    };
    let convs: Vec<&Conversion> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Conv(c) => Some(c),
            Piece::Text(_) => None,
        })
        .collect();
    let mut out = Vec::new();
    if convs.len() != args.len() {
        out.push(format!("printf format has {} conversion(s) but {} argument(s) were given", convs.len(), args.len()));
    }
    for (i, (c, &t)) in convs.iter().zip(args).enumerate() {
        let spec = format!("%{}{}", if c.long { "l" } else { "" }, c.conv);
        let Some(v) = VarArg::of(t) else {
            out.push(format!("printf argument {i} is a {t}: convert it with `as f32` first"));
            continue;
        };
        let want = match c.conv {
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => VarArg::Double,
            'p' => VarArg::Int64,
            _ if c.long => VarArg::Int64,
            _ => VarArg::Int32,
        };
        if v != want {
            let fix = match (want, v) {
                (VarArg::Double, _) => "a float (convert with `as f32`)".to_string(),
                (VarArg::Int64, VarArg::Int32) if c.conv != 'p' => {
                    format!("a 64-bit integer (use `%{}` for 32 bits, or `as u64`)", c.conv)
                }
                (VarArg::Int64, _) => "a 64-bit integer".to_string(),
                (VarArg::Int32, VarArg::Int64) => format!("a 32-bit integer (use `%l{}` for 64 bits)", c.conv),
                (VarArg::Int32, _) => "an integer (use `%f` for floats)".to_string(),
            };
            out.push(format!("printf argument {i} is a {t}, but `{spec}` prints {fix}"));
        }
    }
    out
}

// ---- inline PTX templates -----------------------------------------------------------------

/// Directives that declare module or kernel structure: never inside an instruction block.
const FORBIDDEN_DIRECTIVES: &[&str] = &[
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".weak",
    ".common",
    ".version",
    ".target",
    ".address_size",
    ".file",
    ".loc",
    ".section",
    ".maxnreg",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".pragma",
];

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplatePiece {
    Text(String),
    Operand(usize),
}

/// Split a template into text and `{N}` operands (`{{`/`}}` are literal braces).
pub fn parse_template(t: &str) -> Result<Vec<TemplatePiece>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut n = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(d) => n.push(d),
                        None => {
                            return Err(format!("`{{{n}` is not closed: operands are written `{{0}}`, `{{1}}`, .."))
                        }
                    }
                }
                let i = n.trim().parse::<usize>().map_err(|_| {
                    format!("`{{{n}}}` is not an operand: write `{{0}}`, `{{1}}`, .., or `{{{{` for a literal brace")
                })?;
                if !text.is_empty() {
                    out.push(TemplatePiece::Text(std::mem::take(&mut text)));
                }
                out.push(TemplatePiece::Operand(i));
            }
            '}' => {
                return Err(
                    "a lone `}` would close the block around the inline PTX; write `}}` for a literal brace".into()
                )
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(TemplatePiece::Text(text));
    }
    Ok(out)
}

/// What is wrong with a template for `operands` operands.
pub fn template_problems(t: &str, operands: usize) -> Vec<String> {
    let mut out = Vec::new();
    if t.trim().is_empty() {
        out.push("the inline PTX template is empty".into());
    }
    if let Some(c) = t.chars().find(|c| !(c.is_ascii_graphic() || *c == ' ' || *c == '\n' || *c == '\t')) {
        out.push(format!("the inline PTX template contains {c:?}: only printable ASCII, spaces, tabs and newlines"));
    }
    for bad in ["//", "/*", "*/", "\""] {
        if t.contains(bad) {
            out.push(format!("the inline PTX template contains `{bad}`: comments and strings are not allowed"));
        }
    }
    let words = t.split(|c: char| c.is_whitespace() || c == ';' || c == '{' || c == '}');
    for w in words {
        if w == ".shared" {
            out.push(
                "the inline PTX template declares `.shared` memory, which the kernel's shared-memory layout and limits \
                 would not count; allocate it with `alloc_shared` and pass its address as an operand"
                    .into(),
            );
        }
        if let Some(d) = FORBIDDEN_DIRECTIVES.iter().find(|d| w == **d) {
            out.push(format!(
                "the inline PTX template contains the directive `{d}`: it declares kernel or module structure, \
                 which inline PTX cannot"
            ));
        }
    }
    match parse_template(t) {
        Err(e) => out.push(format!("inline PTX template: {e}")),
        Ok(pieces) => {
            let mut used = vec![false; operands];
            let mut depth = 0i32;
            for p in &pieces {
                match p {
                    TemplatePiece::Operand(i) if *i >= operands => out.push(format!(
                        "the inline PTX template names operand {{{i}}}, but there are {operands} (inputs, then outputs)"
                    )),
                    TemplatePiece::Operand(i) => used[*i] = true,
                    TemplatePiece::Text(s) => {
                        for c in s.chars() {
                            match c {
                                '{' => depth += 1,
                                '}' => depth -= 1,
                                _ => {}
                            }
                            if depth < 0 {
                                out.push("the inline PTX template closes a brace it did not open (`}}`)".into());
                                depth = 0;
                            }
                        }
                    }
                }
            }
            if depth != 0 {
                out.push("the inline PTX template opens a brace it does not close (`{{`)".into());
            }
            for (i, u) in used.iter().enumerate() {
                if !u {
                    out.push(format!("operand {{{i}}} is never used in the inline PTX template"));
                }
            }
        }
    }
    out
}

/// The template with its operands substituted (a template with problems substitutes what it
/// can; the kernel check reports them first).
pub fn expand_template(t: &str, operands: &[String]) -> String {
    match parse_template(t) {
        Ok(pieces) => pieces
            .iter()
            .map(|p| match p {
                TemplatePiece::Text(s) => s.clone(),
                TemplatePiece::Operand(i) => operands.get(*i).cloned().unwrap_or_default(),
            })
            .collect(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_split_into_text_and_conversions() {
        let p = parse_format("x=%5.2f %% %lu!\n").unwrap();
        assert_eq!(p.len(), 5);
        assert_eq!(p[0], Piece::Text("x=".into()));
        assert!(matches!(&p[1], Piece::Conv(c) if c.width == Some(5) && c.precision == Some(2) && c.conv == 'f'));
        assert_eq!(p[2], Piece::Text(" % ".into()));
        assert!(matches!(&p[3], Piece::Conv(c) if c.long && c.conv == 'u'));
        assert!(parse_format("%s").unwrap_err().contains("no strings"));
        assert!(parse_format("%hd").unwrap_err().contains("`h`"));
        assert!(parse_format("50%").unwrap_err().contains("ends inside"));
    }

    #[test]
    fn field_widths_and_precisions_have_a_stated_limit() {
        // A precision above 65535 panicked the simulator; a width of 2e9 was materialized.
        let e = parse_format("%.65536f").unwrap_err();
        assert_eq!(e, "the precision 65536 in `%.65536` exceeds the limit of 65535");
        let e = parse_format("%2000000000d").unwrap_err();
        assert_eq!(e, "the field width 2000000000 in `%2000000000` exceeds the limit of 65535");
        // Digits past usize were dropped silently (no width at all).
        let e = parse_format("%99999999999999999999999d").unwrap_err();
        assert!(e.contains("the field width 99999999999999999999999 in"), "{e}");
        let p = parse_format("%65535.65535f %.f").unwrap();
        assert!(matches!(&p[0], Piece::Conv(c) if c.width == Some(65535) && c.precision == Some(65535)));
        assert!(matches!(&p[2], Piece::Conv(c) if c.precision == Some(0)));
    }

    #[test]
    fn a_nul_ends_the_format_as_in_vprintf() {
        assert_eq!(parse_format("ab\0%d cd").unwrap(), vec![Piece::Text("ab".into())]);
        assert!(format_problems("x\0%d", &[Type::S32])[0].contains("0 conversion(s) but 1"), "the args do not print");
    }

    #[test]
    fn format_arguments_must_match_their_conversions() {
        assert!(format_problems("%d %u %f %lld", &[Type::S32, Type::U32, Type::F32, Type::S64]).is_empty());
        assert!(format_problems("%d", &[Type::F32])[0].contains("`%d` prints an integer"));
        assert!(format_problems("%f", &[Type::U32])[0].contains("prints a float"));
        assert!(format_problems("%u", &[Type::U64])[0].contains("`%lu` for 64 bits"));
        assert!(format_problems("%d %d", &[Type::S32])[0].contains("2 conversion(s) but 1"));
        assert!(format_problems("%f", &[Type::BF16])[0].contains("as f32"));
    }

    #[test]
    fn varargs_are_aligned_to_their_size() {
        let (offs, size) = vararg_layout(&[Type::U32, Type::F32, Type::U32, Type::U64]);
        assert_eq!((offs, size), (vec![0, 8, 16, 24], 32));
        assert_eq!(vararg_layout(&[]), (vec![], 8));
    }

    #[test]
    fn templates_cannot_break_out_of_their_block() {
        assert!(template_problems("add.u32 {2}, {0}, {1};", 3).is_empty());
        let shared = template_problems(".shared .b32 scratch[4]; st.shared.u32 [scratch], {0};", 1);
        assert_eq!(shared.len(), 1, "{shared:?}");
        assert!(shared[0].starts_with("the inline PTX template declares `.shared` memory"), "{shared:?}");
        assert!(template_problems("ld.shared.u32 {1}, [{0}];", 2).is_empty(), "an access is not a declaration");
        assert!(template_problems("{{ .reg .pred p; setp.eq.u32 p, {0}, 0; selp.u32 {1}, 1, 0, p; }}", 2).is_empty());
        let p = |t: &str, n| template_problems(t, n).join("\n");
        assert!(p("mov.u32 {0}, 1; }", 1).contains("lone `}`"));
        assert!(p("}} .entry evil() {{", 0).contains("closes a brace"));
        assert!(p("ret; }} .entry evil() {{", 0).contains("`.entry`"));
        assert!(p("mov.u32 {3}, 1;", 1).contains("operand {3}"));
        assert!(p("mov.u32 {0}, 1;", 2).contains("operand {1} is never used"));
        assert!(p("mov.u32 {0}, 1; // }", 1).contains("comments"));
        assert!(p("mov.u32 {x}, 1;", 1).contains("not an operand"));
    }

    #[test]
    fn templates_expand_operands_and_literal_braces() {
        let ops = vec!["%r1".to_string(), "%r2".to_string()];
        assert_eq!(expand_template("{{ mov.b32 {1}, {0}; }}", &ops), "{ mov.b32 %r2, %r1; }");
    }
}
