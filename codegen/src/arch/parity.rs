//! A wait's phase parity: which phase of an mbarrier `try_wait.parity` / `test_wait.parity`
//! waits for. PTX takes a 32-bit 0 or 1. Phaser also takes a `bool`, `true` being 1 (the odd
//! phase), so `phase = !phase` code reads as written; the builder lowers it with `selp`.
//! The one statement of the rule: the builder, the registry's operand description (the op
//! table in `dsl/README.md`) and the DSL's check all read it here.

use crate::ir::Type;

/// What the value is called in messages.
pub const WHAT: &str = "a phase parity";
/// The forms it takes, as the op table states them.
pub const FORMS: &str = "u32 0 or 1, or bool: true = 1";
/// The values an integer parity may have.
pub const RANGE: (i128, i128) = (0, 1);

/// Whether a value of type `ty` can be a parity: a 32-bit integer or a predicate (`bool`).
pub fn type_ok(ty: Type) -> bool {
    ty == Type::Pred || (ty.is_int() && ty.size() == 4)
}

/// Why the integer `x` is no parity, if it is none.
pub fn value_problem(x: i128) -> Option<String> {
    let (lo, hi) = RANGE;
    (!(lo..=hi).contains(&x)).then(|| format!("phase parity {x} is out of range: must be {lo} or {hi}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_a_parity_takes() {
        assert!(type_ok(Type::U32) && type_ok(Type::S32) && type_ok(Type::Pred));
        assert!(!type_ok(Type::U64) && !type_ok(Type::U16) && !type_ok(Type::F32));
        assert_eq!(value_problem(0), None);
        assert_eq!(value_problem(1), None);
        assert_eq!(value_problem(2).unwrap(), "phase parity 2 is out of range: must be 0 or 1");
        assert!(value_problem(-1).is_some());
    }
}
