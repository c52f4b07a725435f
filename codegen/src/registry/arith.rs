//! Arithmetic helpers that are calls rather than operators, and simulator probes.

ops! {
    /// `cond ? a : b` (`selp`)
    "select" (cond: Bool, a: Scalar, b: Scalar) -> ScalarArgs = |k, call| k.select(cond, a, b);
    /// `min`
    "min" (a: Scalar, b: Scalar) -> ScalarArgs = |k, call| k.min(a, b);
    /// `max`
    "max" (a: Scalar, b: Scalar) -> ScalarArgs = |k, call| k.max(a, b);
    /// `a * b + c`
    "mad" (a: Scalar, b: Scalar, c: Scalar) -> ScalarArgs = |k, call| k.mad(a, b, c);
    /// record values in the simulator's trace (a PTX comment)
    "probe" (tag: Tag, values: Values) -> Unit = |k, call| k.probe(tag, &values);
}
