//! Loops unrolled while the kernel is built: the DSL's `#[unroll] for i in a..b`, whose
//! variable is then a compile-time value in each copy of the body (so it can index register
//! arrays and size copies).

use super::kernel_builder::KernelBuilder;

/// Most iterations an unrolled loop builds (each is a copy of its body).
pub const MAX_UNROLL: u32 = 1024;

impl KernelBuilder {
    /// The values of `(start..end).step_by(step)`, for building one copy of a body per value;
    /// more than [`MAX_UNROLL`] is a build error at the caller (and none are built).
    #[track_caller]
    pub fn unrolled(&mut self, start: u32, end: u32, step: u32) -> std::iter::StepBy<std::ops::Range<u32>> {
        if step == 0 {
            self.error("a loop step of 0 never terminates");
            return (0..0).step_by(1);
        }
        let trips = end.saturating_sub(start).div_ceil(step);
        if trips > MAX_UNROLL {
            self.error(format!(
                "an unrolled loop of {trips} iterations ({start}..{end} step {step}); at most {MAX_UNROLL}: make it a \
                 runtime loop"
            ));
            return (0..0).step_by(1);
        }
        (start..end).step_by(step as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;

    #[test]
    fn iterations_and_limits() {
        let mut k = KernelBuilder::new("u", Target::Sm90a);
        assert_eq!(k.unrolled(2, 11, 3).collect::<Vec<_>>(), vec![2, 5, 8]);
        assert_eq!(k.unrolled(5, 5, 1).count(), 0);
        assert_eq!(k.unrolled(0, MAX_UNROLL, 1).count(), MAX_UNROLL as usize);
        assert!(!k.has_errors());
        assert_eq!(k.unrolled(0, MAX_UNROLL + 1, 1).count(), 0);
        assert_eq!(k.unrolled(0, 4, 0).count(), 0);
        let e = k.finish().unwrap_err().to_string();
        assert!(e.contains("an unrolled loop of 1025 iterations"), "{e}");
        assert!(e.contains("step of 0"), "{e}");
    }
}
