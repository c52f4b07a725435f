//! Vector clocks: one row per thread of the cluster, one component per thread and then one
//! per barrier of a barrier array (a barrier's component counts its completed phases: async
//! copies are published through it).

/// `dst = max(dst, src)` element-wise (`src` may be shorter, e.g. empty).
#[inline]
pub fn join(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
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
