//! User text in PTX. Names (kernels, parameters, shared arrays) become PTX identifiers by a
//! fixed, reversible escape; text that only appears in comments (original names, probe tags,
//! source paths) is quoted so it can never end its comment line. Nothing a user writes
//! reaches the PTX text any other way.
//!
//! The escape keeps ASCII letters, digits and `_`, and writes every other byte of the UTF-8
//! (`$` included) as `$XX` (two upper-case hex digits): `r#loop` → `r$23loop`, `é` → `$C3$A9`.
//! A name's first character is escaped too where PTX would not accept it there (a digit, a
//! lone `_`) or where the whole name is one PTX or Phaser reserves at module scope
//! (`WARP_SZ`, the dynamic shared-memory window). Decoding `$XX` gives the name back, so two
//! different names never share a symbol.

use std::borrow::Cow;

/// The module-scope symbol of the dynamic shared-memory window.
pub const DYN_SMEM: &str = "phaser_dynamic_smem";

/// Identifiers PTX or the printer reserve at module scope (an entry may not be named so).
const RESERVED: &[&str] = &["WARP_SZ", DYN_SMEM];

fn keeps(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn push_escaped(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('$');
    out.push(HEX[(b >> 4) as usize] as char);
    out.push(HEX[(b & 15) as usize] as char);
}

/// `name` with every byte PTX identifiers cannot hold escaped (for use after a prefix such as
/// `param_`, where any first character is fine). Unchanged (borrowed) when nothing needs it.
pub fn escape(name: &str) -> Cow<'_, str> {
    if name.bytes().all(keeps) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for b in name.bytes() {
        if keeps(b) {
            out.push(b as char);
        } else {
            push_escaped(&mut out, b);
        }
    }
    Cow::Owned(out)
}

/// The PTX identifier of a kernel entry named `name` (also what the CUDA backend looks the
/// function up by). An empty name has no symbol: `check_kernel` refuses it.
pub fn entry_symbol(name: &str) -> Cow<'_, str> {
    let first_ok = match name.as_bytes() {
        [] => true,
        [b'_'] => false,
        [first, ..] => first.is_ascii_alphabetic() || *first == b'_',
    };
    if first_ok && !RESERVED.contains(&name) {
        return escape(name);
    }
    let mut out = String::with_capacity(name.len() + 3);
    for (i, b) in name.bytes().enumerate() {
        if i > 0 && keeps(b) {
            out.push(b as char);
        } else {
            push_escaped(&mut out, b);
        }
    }
    Cow::Owned(out)
}

/// The `.param` symbol of kernel parameter `name`.
pub fn param_symbol(name: &str) -> String {
    format!("param_{}", escape(name))
}

/// The `.shared` symbol of the static shared array `name`.
pub fn shared_symbol(name: &str) -> String {
    format!("smem_{}", escape(name))
}

/// `text` made safe for the rest of a `//` comment line: unchanged when it is printable ASCII,
/// otherwise written as an escaped string literal (`"a\nb"`, `"na\u{ef}ve"`), so it can
/// neither end the comment and inject PTX nor carry a non-ASCII character, which the driver's
/// PTX JIT rejects anywhere in the file, comments included (found on the H200; a newer
/// offline ptxas accepted it).
pub fn comment_text(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("\"{}\"", text.escape_default()))
    }
}

/// `text` as a quoted, escaped ASCII string for a comment (`"r#loop"`, `"na\u{ef}ve"`).
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.escape_default())
}

/// `path` made safe inside the quotes of a `.file` directive: `\` becomes `/` (Windows paths),
/// a quote or a control character, which would end the string or the line, becomes `_`, and
/// a non-ASCII character (which the PTX JIT rejects) its UTF-8 bytes percent-encoded.
pub fn file_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '\\' => out.push('/'),
            '"' => out.push('_'),
            c if c.is_control() => out.push('_'),
            c if c.is_ascii() => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    out
}

/// Decode an escaped name (tests prove the escape is reversible, hence injective).
pub fn unescape(symbol: &str) -> Option<String> {
    let b = symbol.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let hex = symbol.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether `s` is an identifier PTX accepts: `[a-zA-Z][a-zA-Z0-9_$]*` or
/// `[_$%][a-zA-Z0-9_$]+`, and not reserved.
pub fn is_ptx_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    let rest_ok = |r: &[u8]| r.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$');
    let shape = match b {
        [] => false,
        [f, rest @ ..] if f.is_ascii_alphabetic() => rest_ok(rest),
        [b'_' | b'$' | b'%', rest @ ..] => !rest.is_empty() && rest_ok(rest),
        _ => false,
    };
    shape && !RESERVED.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept() {
        for n in ["k", "axpb_kernel", "Tile_2", "_x", "add", "ret", "loop"] {
            assert_eq!(entry_symbol(n), n);
            assert_eq!(escape(n), n);
        }
        assert_eq!(param_symbol("x"), "param_x");
        assert_eq!(shared_symbol("tiles"), "smem_tiles");
    }

    #[test]
    fn other_names_are_escaped_reversibly() {
        assert_eq!(entry_symbol("r#loop"), "r$23loop");
        assert_eq!(entry_symbol("é"), "$C3$A9");
        assert_eq!(entry_symbol("a b"), "a$20b");
        assert_eq!(entry_symbol("a\nb"), "a$0Ab");
        assert_eq!(entry_symbol("1st"), "$31st");
        assert_eq!(entry_symbol("_"), "$5F");
        assert_eq!(entry_symbol("WARP_SZ"), "$57ARP_SZ");
        assert_eq!(entry_symbol("phaser_dynamic_smem"), "$70haser_dynamic_smem");
        assert_eq!(entry_symbol("a$b"), "a$24b", "`$` itself is escaped, so escapes cannot be forged");
        assert_eq!(param_symbol("1"), "param_1", "after a prefix a digit is fine");
        for n in ["r#loop", "é", "a b", "1st", "_", "WARP_SZ", "a$b", "$24", "日本", "x.y", "%tid"] {
            let s = entry_symbol(n);
            assert!(is_ptx_identifier(&s), "{n:?} -> {s}");
            assert_eq!(unescape(&s).as_deref(), Some(n));
        }
    }

    #[test]
    fn comments_cannot_be_ended() {
        assert_eq!(comment_text("phase"), "phase");
        assert_eq!(comment_text("x\n\tret;"), "\"x\\n\\tret;\"");
        assert!(!comment_text("a\u{2028}b").contains('\u{2028}'));
        assert_eq!(file_path("C:\\src\\k.rs"), "C:/src/k.rs");
        assert_eq!(file_path("a\"b\nc"), "a_b_c");
        // The driver's PTX JIT rejects any non-ASCII byte, in comments too.
        assert_eq!(comment_text("na\u{ef}ve kernel"), "\"na\\u{ef}ve kernel\"");
        assert_eq!(file_path("src/na\u{ef}ve.rs"), "src/na%C3%AFve.rs");
    }
}
