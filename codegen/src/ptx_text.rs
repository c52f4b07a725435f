//! Emitted PTX read back as instruction statements, so that a check matches an instruction
//! (its opcode and operands), never a substring that a comment, a `.loc` line, a label or
//! another instruction's operand happens to hold.
//!
//! A pattern is written like the instruction: `"mbarrier.arrive.expect_tx.shared::cta.b64 _,
//! [%r*], 4096"`. Its opcode must equal the instruction's; its operands are compared one by one
//! (as many as the instruction has), where `_` is any operand and `*` any run of characters
//! (`%r*`, `[%rd*+16]`), also in the opcode (`tcgen05.mma.*`). A pattern of only an opcode
//! matches that opcode with any operands. A guard in the pattern (`@%p* bra _`) must match the
//! instruction's; without one, guarded and unguarded instructions both match.

use std::fmt;

/// One PTX instruction statement (`@%p1 add.u32 %r3, %r1, 7;`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction<'a> {
    /// The 1-based line of the PTX text where the statement starts.
    pub line: usize,
    /// The guard predicate without its `@` (`%p1`, `!%p1`).
    pub guard: Option<&'a str>,
    /// `mbarrier.arrive.expect_tx.shared::cta.b64`
    pub opcode: &'a str,
    /// The operands, split at the commas outside `{...}` and `[...]`, trimmed.
    pub operands: Vec<&'a str>,
}

impl Instruction<'_> {
    /// Whether this instruction matches `pattern` (see the module's documentation).
    pub fn matches(&self, pattern: &str) -> bool {
        let Some(p) = parse_statement(pattern.trim().trim_end_matches(';'), 0) else {
            return false;
        };
        if !glob(p.opcode, self.opcode) {
            return false;
        }
        if let Some(g) = p.guard {
            if !self.guard.is_some_and(|mine| glob(g, mine)) {
                return false;
            }
        }
        if p.operands.is_empty() {
            return true;
        }
        p.operands.len() == self.operands.len()
            && p.operands.iter().zip(&self.operands).all(|(want, got)| *want == "_" || glob(want, got))
    }
}

impl fmt::Display for Instruction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = self.guard {
            write!(f, "@{g} ")?;
        }
        write!(f, "{}", self.opcode)?;
        for (n, operand) in self.operands.iter().enumerate() {
            // An operand list may span lines: one space between its words, none inside braces.
            let words = operand.split_whitespace().collect::<Vec<_>>().join(" ");
            let tight = words.replace("{ ", "{").replace(" }", "}");
            write!(f, "{}{tight}", if n == 0 { " " } else { ", " })?;
        }
        write!(f, ";")
    }
}

/// Every instruction statement of `ptx`, in order: comments, directives (`.loc`, `.reg`, the
/// entry's header, ...), labels and scope braces are not instructions. A statement may span
/// lines (wgmma's accumulator list); a comment between its operands is skipped, one inside a
/// `{...}` operand list would stay in that operand's text (the printer writes none there).
pub fn instructions(ptx: &str) -> Vec<Instruction<'_>> {
    let code = blank_comments(ptx);
    // `code` has `ptx`'s byte offsets: a slice of it names the same bytes of `ptx`.
    let rebase = |s: &str| -> &str {
        let at = s.as_ptr() as usize - code.as_ptr() as usize;
        &ptx[at..at + s.len()]
    };
    let (mut out, mut line, mut counted) = (Vec::new(), 1, 0);
    for piece in code.split(';') {
        // Directives without a `;` (`.loc`, the entry's header), labels and braces may lead
        // the piece, each on its own line: the statement starts on the first other line.
        let Some(text) = piece.split_inclusive('\n').find_map(|l| {
            let t = strip_scaffolding(l.trim());
            (!t.is_empty() && !t.starts_with('.')).then_some(t)
        }) else {
            continue;
        };
        let start = text.as_ptr() as usize - code.as_ptr() as usize;
        let end = piece.as_ptr() as usize - code.as_ptr() as usize + piece.trim_end().len();
        line += code[counted..start].matches('\n').count();
        counted = start;
        if let Some(inst) = parse_statement(&code[start..end], line) {
            out.push(Instruction {
                line,
                guard: inst.guard.map(rebase),
                opcode: rebase(inst.opcode),
                operands: inst.operands.into_iter().map(rebase).collect(),
            });
        }
    }
    out
}

/// `ptx` with every comment's bytes replaced by spaces (the same length, the same offsets).
fn blank_comments(ptx: &str) -> String {
    let mut code = ptx.as_bytes().to_vec();
    let (mut i, mut in_block) = (0, false);
    while i < code.len() {
        if in_block {
            if code[i..].starts_with(b"*/") {
                code[i..i + 2].fill(b' ');
                in_block = false;
                i += 2;
            } else {
                // Newlines stay, so line numbers do.
                if code[i] != b'\n' {
                    code[i] = b' ';
                }
                i += 1;
            }
        } else if code[i..].starts_with(b"//") {
            let end = code[i..].iter().position(|&c| c == b'\n').map_or(code.len(), |n| i + n);
            code[i..end].fill(b' ');
            i = end;
        } else if code[i..].starts_with(b"/*") {
            code[i..i + 2].fill(b' ');
            in_block = true;
            i += 2;
        } else {
            i += 1;
        }
    }
    // Whole characters were blanked (a comment ends at ASCII), so this is UTF-8.
    String::from_utf8(code).expect("comments blanked whole")
}

/// The instructions of `ptx` that match `pattern`.
pub fn find_all<'a>(ptx: &'a str, pattern: &str) -> Vec<Instruction<'a>> {
    instructions(ptx).into_iter().filter(|i| i.matches(pattern)).collect()
}

/// How many instructions of `ptx` match `pattern`.
pub fn count(ptx: &str, pattern: &str) -> usize {
    find_all(ptx, pattern).len()
}

/// Whether an instruction of `ptx` matches `pattern`.
pub fn has(ptx: &str, pattern: &str) -> bool {
    instructions(ptx).iter().any(|i| i.matches(pattern))
}

/// The directive lines of `ptx` (`.maxnreg 168`, `.shared .align 8 .b64 smem_bars[4];`), without
/// their comments and surrounding whitespace.
pub fn directives(ptx: &str) -> Vec<&str> {
    ptx.lines().map(|l| l.split("//").next().unwrap_or("").trim()).filter(|l| l.starts_with('.')).collect()
}

/// Whether a directive line of `ptx` is `pattern` (whole line; `*` any run of characters,
/// whitespace not significant).
pub fn has_directive(ptx: &str, pattern: &str) -> bool {
    directives(ptx).iter().any(|d| glob(pattern, d))
}

/// Leading labels (`$L_loop_3:`), scope braces and the entry header's closing `)` removed
/// from a statement (a closing scope brace follows a `;`, so it leads a piece too).
fn strip_scaffolding(mut s: &str) -> &str {
    loop {
        let before = s;
        s = s.trim_start_matches(['{', '}', ')']).trim_start();
        if let Some((label, rest)) = s.split_once(':') {
            let is_label = !label.is_empty()
                && !label.contains(char::is_whitespace)
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '%');
            // `shared::cta` is an opcode's qualifier, not a label: a label is followed by a
            // space or the end, never by a second `:`.
            if is_label && !rest.starts_with(':') {
                s = rest.trim_start();
            }
        }
        if s == before {
            return s;
        }
    }
}

fn parse_statement(s: &str, line: usize) -> Option<Instruction<'_>> {
    let s = s.trim();
    let (guard, s) = match s.strip_prefix('@') {
        Some(g) => {
            let (g, rest) = g.split_once(char::is_whitespace)?;
            (Some(g), rest.trim_start())
        }
        None => (None, s),
    };
    let (opcode, rest) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
    if opcode.is_empty() {
        return None;
    }
    Some(Instruction { line, guard, opcode, operands: split_operands(rest.trim()) })
}

/// Operands split at the commas outside braces and brackets.
fn split_operands(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// `*` matches any run of characters (possibly empty); everything else itself. Whitespace is
/// not significant (`{%r1, %r2}` matches `{%r1,%r2}`).
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().filter(|c| !c.is_whitespace()).collect();
    let t: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    // Iterative wildcard match with backtracking to the last `*`.
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.visible .entry k(
\t.param .u64 param_out
)
.maxntid 128, 1, 1
{
\t.reg .b32 %r<4>;
\t.loc 1 12 0
\tmov.u32 %r1, %tid.x; // examples/x.rs:12 add.u32 %r9, %r9, 7;
\t/* shr.u32 %r2, %r1, 7; */
$L_loop_3:
\t@!%p1 bra $L_loop_3;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 4096;
\t{ .reg .b32 t; add.u32 t, %r1, 41; mov.u32 %r3, t; }
\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2}, %rd1, %rd2, 1, 1, 1, 0, 0;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {
\t\t%f1, %f2,
\t\t%f3, %f4}, // the accumulator
\t\t%rd1, /* a */ %rd2, 1, 1, 1, 0, 0;
\tret;
}
";

    #[test]
    fn comments_directives_labels_and_braces_are_not_instructions() {
        let ops: Vec<&str> = instructions(PTX).iter().map(|i| i.opcode).collect();
        assert_eq!(
            ops,
            [
                "mov.u32",
                "bra",
                "mbarrier.arrive.expect_tx.shared::cta.b64",
                "add.u32",
                "mov.u32",
                "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16",
                "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16",
                "ret"
            ]
        );
        // The `add.u32 ..., 7` and `shr.u32` in comments do not count.
        assert!(!has(PTX, "add.u32 _, _, 7") && !has(PTX, "shr.u32"));
        assert_eq!(instructions(PTX)[1].line, 11);
        assert_eq!(instructions(PTX)[1].to_string(), "@!%p1 bra $L_loop_3;");
    }

    #[test]
    fn operands_are_matched_one_by_one() {
        assert!(has(PTX, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r*], 4096"));
        // A suffix of an operand is not the operand; the count must agree too.
        assert!(!has(PTX, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r*], 96"));
        assert!(!has(PTX, "mbarrier.arrive.expect_tx.shared::cta.b64 _, 4096"));
        assert!(has(PTX, "add.u32 t, %r1, 41") && has(PTX, "mov.u32 %r3, t"));
        assert!(has(PTX, "wgmma.mma_async.* {%f1,%f2}, _, _, 1, 1, 1, 0, 0"));
        assert!(!has(PTX, "wgmma.mma_async.* {%f1,%f2}, _, _, 1, 1, 1, 0, 1"));
        // Over lines, with comments between operands; the line is where the statement starts.
        let multi = find_all(PTX, "wgmma.mma_async.* {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0");
        assert_eq!(multi.len(), 1);
        assert_eq!(multi[0].line, 15);
        assert_eq!(
            multi[0].to_string(),
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;"
        );
        assert_eq!(count(PTX, "mov.u32"), 2, "an opcode alone matches any operands");
        assert_eq!(count(PTX, "mov"), 0, "the opcode is matched whole");
    }

    #[test]
    fn guards_match_when_the_pattern_has_one() {
        assert!(has(PTX, "bra $L_loop_3") && has(PTX, "@!%p* bra _"));
        assert!(!has(PTX, "@%p1 bra _"));
        assert!(!has(PTX, "@%p* ret"), "an unguarded instruction does not match a guarded pattern");
    }

    #[test]
    fn directives_are_whole_lines() {
        assert!(has_directive(PTX, ".maxntid 128, 1, 1") && has_directive(PTX, ".reg .b32 %r<*>;"));
        assert!(!has_directive(PTX, ".maxntid 128") && !has_directive(PTX, "mov.u32 %r1, %tid.x;"));
        assert!(directives(PTX).contains(&".loc 1 12 0"));
    }

    #[test]
    fn glob_backtracks() {
        assert!(glob("a*b*c", "aXbYbZc") && glob("*", "") && glob("[%rd*+16]", "[%rd12+16]"));
        assert!(glob("%r*", "%rd1"), "a register class prefix is the caller's to spell out");
        assert!(!glob("a*b", "aXbY") && !glob("x", "xx") && !glob("xx", "x"));
    }
}
