//! Vector clocks: one row per thread of the cluster, one component per thread and then one
//! per barrier of a barrier array (a barrier's component counts its completed phases: async
//! copies are published through it).

/// `dst = max(dst, src)` element-wise (`src` may be shorter, e.g. empty). The hottest loop
/// of the checker: with AVX2 when the CPU has it (the baseline x86-64 target has no unsigned
/// 32-bit max instruction).
#[inline]
pub fn join(dst: &mut [u32], src: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
            // a `#[target_feature(enable = "avx2")]` function; it is otherwise safe code.
            unsafe { join_avx2(dst, src) };
            return;
        }
    }
    join_portable(dst, src);
}

#[inline]
fn join_portable(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn join_avx2(dst: &mut [u32], src: &[u32]) {
    join_portable(dst, src);
}

/// Release `row` into an accumulating clock.
#[inline]
pub fn release_to(acc: &mut Vec<u32>, row: &[u32]) {
    if acc.len() < row.len() {
        acc.resize(row.len(), 0);
    }
    join(acc, row);
}

/// The clocks of every thread of a cluster, `width` components each.
pub struct VectorClocks {
    pub width: usize,
    rows: Vec<u32>,
}

impl VectorClocks {
    /// Thread `t` starts with its own component at 1 (0 means "nothing seen").
    pub fn new(threads: usize, width: usize) -> VectorClocks {
        let mut rows = vec![0u32; threads * width];
        for t in 0..threads {
            rows[t * width + t] = 1;
        }
        VectorClocks { width, rows }
    }
    #[inline]
    pub fn row(&self, t: u32) -> &[u32] {
        &self.rows[t as usize * self.width..(t as usize + 1) * self.width]
    }
    #[inline]
    pub fn row_mut(&mut self, t: u32) -> &mut [u32] {
        &mut self.rows[t as usize * self.width..(t as usize + 1) * self.width]
    }
    /// Thread `t`'s own clock.
    #[inline]
    pub fn own(&self, t: u32) -> u32 {
        self.rows[t as usize * self.width + t as usize]
    }
    /// Thread `t`'s own clock, then advance it (after a release).
    #[inline]
    pub fn tick(&mut self, t: u32) -> u32 {
        let i = t as usize * self.width + t as usize;
        let c = self.rows[i];
        self.rows[i] = c + 1;
        c
    }
    /// Thread `t` acquires `clock`.
    #[inline]
    pub fn acquire(&mut self, t: u32, clock: &[u32]) {
        join(self.row_mut(t), clock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_takes_the_elementwise_max_over_the_shorter_length() {
        let mut a: Vec<u32> = (0..37).collect();
        let b: Vec<u32> = (0..30).map(|i| 40 - i).collect();
        join(&mut a, &b);
        let want: Vec<u32> = (0..37).map(|i| if i < 30 { (40 - i).max(i) } else { i }).collect();
        assert_eq!(a, want);
        let mut c = vec![u32::MAX, 0];
        join(&mut c, &[1, u32::MAX]);
        assert_eq!(c, [u32::MAX, u32::MAX], "unsigned compare");
    }
}
