//! The host side of the tensor-parallel GEMM with its all-gather fused
//! (`gallery/gemm_allgather_dsl.rs`): `R` ranks, each a device (or, on one GPU, several ranks
//! of one device: two buffers sets on it, the pushes' writes local), each owning `m / R` rows
//! of A; every rank computes `C_r = A_full * B_r` with its own B (K-major, `n x k`).
//!
//! One step is one launch group ([`TpGemm::simulate`], [`TpGemm::launch`]): every rank's
//! GEMM, then its pushes (one per peer: its A slice into the peer's gathered A, then the
//! peer's per-m-block flags raised to the step's epoch), all in flight together. The GEMM's
//! grid leaves SMs free ([`TpTiles::gemm_grid`]) so the pushes run beside it. Epochs must grow
//! from step to step: the flags are never reset.

use crate::gallery::gemm_allgather_dsl::{allgather_push, gemm_allgather_dsl, PUSH_THREADS};
use crate::gallery::gemm_dsl::{BLOCK_K, CONSUMERS, EPI, THREADS};
use half::bf16;
use phaser::problem::random_u32;
use phaser::runtime::sim::SimReport;
use phaser::runtime::LaunchReport;
use phaser::{
    launch_group, simulate_group, Arg, Buffer, Device, GroupLaunch, Kernel, LaunchConfig, PeerView, RuntimeError,
    Swizzle, TensorMap,
};

/// The GEMM's `#[comptime]` configuration: N of the CTA tile, rows per consumer warpgroup
/// (the CTA tile has `2 * wg_m` rows: one m-block), pipeline stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpTiles {
    pub block_n: u32,
    pub wg_m: u32,
    pub stages: u32,
}

impl TpTiles {
    /// 128 x 128 tiles, 4 stages.
    pub fn gallery() -> TpTiles {
        TpTiles { block_n: 128, wg_m: 64, stages: 4 }
    }
    /// Rows of the CTA tile: one m-block, the unit of a push and of a flag.
    pub fn block_m(&self) -> u32 {
        CONSUMERS * self.wg_m
    }
    /// Why these tiles cannot run, if they cannot: each consumer warpgroup's rows are whole
    /// wgmma slabs, the m-block is one TMA box, N of the tile is whole epilogue sub-tiles
    /// within wgmma's largest N, the stages' rings fit shared memory (checked cheaply before
    /// the kernels are built: a huge count would build a huge kernel), and both kernels build.
    pub fn problem(&self) -> Option<String> {
        use phaser::codegen::arch::{limits::TMA_MAX_BOX_DIM, wgmma};
        let TpTiles { block_n, wg_m, stages } = *self;
        let max_wg_m = TMA_MAX_BOX_DIM / CONSUMERS;
        if wg_m == 0 || !wg_m.is_multiple_of(wgmma::M) || wg_m > max_wg_m {
            return Some(format!(
                "wg_m = {wg_m} must be a positive multiple of wgmma's {} rows, at most {max_wg_m} (the m-block of \
                 {CONSUMERS} warpgroups is one TMA box of at most {TMA_MAX_BOX_DIM} rows)",
                wgmma::M
            ));
        }
        if block_n == 0 || !block_n.is_multiple_of(EPI) || block_n > wgmma::MAX_N {
            return Some(format!(
                "block_n = {block_n} must be a positive multiple of the epilogue's {EPI} columns, at most wgmma's \
                 largest N ({})",
                wgmma::MAX_N
            ));
        }
        let smem = u64::from(phaser::Target::Sm90a.limits().max_shared_per_block);
        let stage_bytes = u64::from(self.block_m() + block_n) * u64::from(BLOCK_K) * 2;
        if stages == 0 || u64::from(stages) * stage_bytes > smem {
            return Some(format!(
                "stages = {stages}: at least one, and the rings ({stage_bytes} bytes a stage) must fit the {smem} \
                 bytes of shared memory"
            ));
        }
        let built = self.push_kernel().and_then(|_| self.gemm_kernel());
        built.err().map(|e| format!("the kernels of {self:?} do not build: {e}"))
    }
    pub fn push_kernel(&self) -> phaser::codegen::Result<Kernel> {
        allgather_push::kernel_for(self.block_m())
    }
    pub fn gemm_kernel(&self) -> phaser::codegen::Result<Kernel> {
        gemm_allgather_dsl::kernel_for(self.block_n, self.wg_m, self.stages)
    }
    /// The GEMM's persistent grid on `sms` SMs: at most one CTA per tile, and an eighth of the
    /// SMs (at least one) left to the pushes, so both kernels are resident at once.
    pub fn gemm_grid(&self, m: u32, n: u32, sms: u32) -> u32 {
        // In u64: the tile count of a large shape overflows u32 (the grid never does: SMs bound it).
        let tiles = u64::from(m / self.block_m()) * u64::from(n.div_ceil(self.block_n));
        let free = (sms / 8).max(1);
        tiles.min(u64::from(sms.saturating_sub(free))).max(1) as u32
    }
    /// Why `ranks` ranks cannot run an `m x n x k` GEMM, if they cannot: each rank's slice is
    /// whole m-blocks (the unit of a push and a flag), and the tensor maps need 16-byte rows.
    /// The tiles' own problem first ([`TpTiles::problem`]); every product of the shape is
    /// checked (a rank count whose m-blocks overflow M's u32, a buffer larger than an
    /// allocation may be) and named.
    pub fn shape_problem(&self, ranks: usize, m: u32, n: u32, k: u32) -> Option<String> {
        if let Some(p) = self.problem() {
            return Some(p);
        }
        let bm = self.block_m();
        if ranks == 0 {
            return Some("no ranks".into());
        }
        let Some(rank_rows) = u32::try_from(ranks).ok().and_then(|r| r.checked_mul(bm)) else {
            return Some(format!("{ranks} ranks x {bm} rows overflows M's u32: no M has whole m-blocks per rank"));
        };
        if m == 0 || !m.is_multiple_of(rank_rows) {
            return Some(format!("M = {m} is not a multiple of {ranks} ranks x {bm} rows (whole m-blocks per rank)"));
        }
        if n == 0 || k == 0 || !n.is_multiple_of(8) || !k.is_multiple_of(8) {
            return Some(format!("N = {n} and K = {k} must be positive multiples of 8 (16-byte rows)"));
        }
        // Each buffer's bytes (bf16) must fit one Rust allocation (isize): the host keeps A, each B
        // and a C of the same sizes.
        for (what, rows, cols) in [("A", m, k), ("B", n, k), ("C", m, n)] {
            let bytes = u128::from(rows) * u128::from(cols) * 2;
            if bytes > isize::MAX as u128 {
                return Some(format!("{what} ({rows} x {cols} bf16) is {bytes} bytes, more than one allocation holds"));
            }
        }
        None
    }
}

/// The two kernels of a step (a test's mutants replace them).
pub struct TpKernels {
    pub push: Kernel,
    pub gemm: Kernel,
}

impl TpKernels {
    pub fn new(tiles: TpTiles) -> phaser::codegen::Result<TpKernels> {
        Ok(TpKernels { push: tiles.push_kernel()?, gemm: tiles.gemm_kernel()? })
    }
}

/// One rank's buffers on its device.
pub struct Rank {
    /// Its own rows of A (`rows x k`).
    pub a_own: Buffer<bf16>,
    /// The gathered A (`m x k`): its own rows from the start, the peers' as they push them.
    pub a_full: Buffer<bf16>,
    pub b: Buffer<bf16>,
    pub c: Buffer<bf16>,
    /// One flag per m-block of `a_full`, raised by the m-block's owner to the step's epoch.
    pub flags: Buffer<u32>,
    maps: [TensorMap; 3],
}

/// A tensor-parallel GEMM over the ranks of `devs` (a device may appear more than once).
pub struct TpGemm<'d> {
    pub devs: Vec<&'d Device>,
    pub tiles: TpTiles,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// The whole A (`m x k`) and each rank's B (`n x k`), on the host.
    pub a: Vec<bf16>,
    pub bs: Vec<Vec<bf16>>,
    pub ranks: Vec<Rank>,
    pub gemm_grid: u32,
    /// The streams of a step, made once: each rank's GEMM's (rank order), then each push's
    /// (pusher-major, peers in rank order).
    streams: Vec<phaser::Stream<'d>>,
}

/// Gathered rows not pushed yet, and C before the GEMM: NaN, which no product of the inputs is.
pub const POISON: bf16 = bf16::from_bits(0xFFFF);

/// Elements of {-1, 0, 1}: every sum is a small integer, exact in f32 in any order.
fn ternary(n: usize, seed: u64) -> Vec<bf16> {
    random_u32(n, seed).into_iter().map(|x| bf16::from_f32((x % 3) as f32 - 1.0)).collect()
}

impl<'d> TpGemm<'d> {
    /// Buffers and tensor maps of every rank for an `m x n x k` GEMM with ternary inputs from
    /// `seed`; peer access enabled between distinct devices.
    pub fn new(
        devs: Vec<&'d Device>,
        tiles: TpTiles,
        (m, n, k): (u32, u32, u32),
        seed: u64,
    ) -> Result<Self, RuntimeError> {
        if let Some(problem) = tiles.shape_problem(devs.len(), m, n, k) {
            return Err(RuntimeError::BadLaunch { kernel: "gemm_allgather_dsl".into(), problem });
        }
        for a in &devs {
            for b in &devs {
                if a.id() != b.id() {
                    a.enable_peer_access(b)?;
                }
            }
        }
        let r_count = devs.len();
        let rows = (m / r_count as u32) as usize;
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        let a = ternary(mu * ku, seed);
        let bs: Vec<Vec<bf16>> = (0..r_count).map(|r| ternary(nu * ku, seed ^ (0x5bd1_e995 + r as u64))).collect();
        let bm = tiles.block_m();
        let mut ranks = Vec::with_capacity(r_count);
        for (r, dev) in devs.iter().enumerate() {
            let own = &a[r * rows * ku..(r + 1) * rows * ku];
            let mut full = vec![POISON; mu * ku];
            full[r * rows * ku..(r + 1) * rows * ku].copy_from_slice(own);
            let a_own = dev.upload(own)?;
            let a_full = dev.upload(&full)?;
            let b = dev.upload(&bs[r])?;
            let c = dev.upload(&vec![POISON; mu * nu])?;
            let flags = dev.alloc::<u32>((m / bm) as usize)?;
            let (m64, n64, k64) = (m as u64, n as u64, k as u64);
            let sw = Swizzle::B128;
            let maps = [
                dev.tensor_map(&a_full, &[k64, m64], &[BLOCK_K, bm], sw)?,
                dev.tensor_map(&b, &[k64, n64], &[BLOCK_K, tiles.block_n], sw)?,
                dev.tensor_map(&c, &[n64, m64], &[EPI, EPI], sw)?,
            ];
            ranks.push(Rank { a_own, a_full, b, c, flags, maps });
        }
        let sms = devs[0].sm_count()?;
        let gemm_grid = tiles.gemm_grid(m, n, sms);
        let mut streams = Vec::with_capacity(r_count * r_count);
        for d in &devs {
            streams.push(d.stream()?);
        }
        for d in &devs {
            for _ in 1..r_count {
                streams.push(d.stream()?);
            }
        }
        Ok(TpGemm { devs, tiles, m, n, k, a, bs, ranks, gemm_grid, streams })
    }

    /// Rows of A each rank owns.
    pub fn rows(&self) -> u32 {
        self.m / self.ranks.len() as u32
    }

    /// Build one step's launch group (every GEMM first, then every push except those of rank
    /// `skip_push_of`) and hand it to `run`.
    fn with_group<R>(
        &self,
        kernels: &TpKernels,
        epoch: u32,
        skip_push_of: Option<usize>,
        run: impl FnOnce(Vec<GroupLaunch<'_>>) -> phaser::runtime::Result<R>,
    ) -> phaser::runtime::Result<R> {
        let n_ranks = self.ranks.len();
        let rows = self.rows();
        // Each push with its stream's index.
        let pairs: Vec<(usize, usize, usize)> = (0..n_ranks)
            .flat_map(|r| (0..n_ranks).filter(move |&p| p != r).map(move |p| (r, p)))
            .enumerate()
            .map(|(i, (r, p))| (r, p, n_ranks + i))
            .filter(|&(r, _, _)| Some(r) != skip_push_of)
            .collect();
        // A peer on another device is reached through a peer mapping made for the pusher's.
        let mut views: Vec<Option<(PeerView<'_, bf16>, PeerView<'_, u32>)>> = Vec::with_capacity(pairs.len());
        for &(r, p, _) in &pairs {
            let (dr, dp) = (self.devs[r], self.devs[p]);
            views.push(if dr.id() == dp.id() {
                None
            } else {
                Some((self.ranks[p].a_full.peer(dr)?, self.ranks[p].flags.peer(dr)?))
            });
        }
        let streams = &self.streams;
        let mut group = Vec::with_capacity(n_ranks + pairs.len());
        let gemm_cfg = LaunchConfig::linear(self.gemm_grid, THREADS);
        for (r, rank) in self.ranks.iter().enumerate() {
            let own_lo = r as u32 * rows;
            let args = [
                Arg::from(&rank.maps[0]),
                Arg::from(&rank.maps[1]),
                Arg::from(&rank.maps[2]),
                Arg::from(self.m),
                Arg::from(self.n),
                Arg::from(self.k),
                Arg::buffer(&rank.flags),
                Arg::from(epoch),
                Arg::from(own_lo),
                Arg::from(own_lo + rows),
            ];
            group.push(GroupLaunch::new(&streams[r], &kernels.gemm, gemm_cfg, args));
        }
        let push_cfg = LaunchConfig::linear(rows / self.tiles.block_m(), PUSH_THREADS);
        for (i, &(r, p, stream)) in pairs.iter().enumerate() {
            let (dst, flags) = match &views[i] {
                Some((a, f)) => (Arg::from(a), Arg::from(f)),
                None => (Arg::buffer(&self.ranks[p].a_full), Arg::buffer(&self.ranks[p].flags)),
            };
            let args = [
                Arg::buffer(&self.ranks[r].a_own),
                dst,
                flags,
                Arg::from(self.k),
                Arg::from(r as u32 * rows),
                Arg::from(epoch),
            ];
            group.push(GroupLaunch::new(&streams[stream], &kernels.push, push_cfg, args));
        }
        run(group)
    }

    /// One step in the simulator: every launch's report (GEMMs first, in rank order, then the
    /// pushes, pusher-major).
    pub fn simulate(
        &self,
        kernels: &TpKernels,
        epoch: u32,
        skip_push_of: Option<usize>,
    ) -> phaser::runtime::Result<Vec<SimReport>> {
        self.with_group(kernels, epoch, skip_push_of, simulate_group)
    }

    /// One step on the devices (or the simulator, which fails on a finding).
    pub fn launch(&self, kernels: &TpKernels, epoch: u32) -> phaser::runtime::Result<Vec<LaunchReport>> {
        self.with_group(kernels, epoch, None, launch_group)
    }

    /// Poison every C again (before a step whose output is checked).
    pub fn poison_c(&mut self) -> phaser::runtime::Result<()> {
        let len = self.m as usize * self.n as usize;
        for (r, rank) in self.ranks.iter_mut().enumerate() {
            self.devs[r].write(&mut rank.c, &vec![POISON; len])?;
        }
        Ok(())
    }

    /// Every rank's gathered A equals A and its C the exact product `A * B_r` rounded to bf16,
    /// bit for bit: `Err` names the first element that is not.
    pub fn check(&self) -> phaser::runtime::Result<Result<(), String>> {
        let (m, n, k) = (self.m as usize, self.n as usize, self.k as usize);
        for (r, rank) in self.ranks.iter().enumerate() {
            let full = self.devs[r].download(&rank.a_full)?;
            if let Some(i) = (0..m * k).find(|&i| full[i].to_bits() != self.a[i].to_bits()) {
                return Ok(Err(format!(
                    "rank {r}: gathered A[{}][{}] = {}, want {}",
                    i / k,
                    i % k,
                    full[i],
                    self.a[i]
                )));
            }
            let got = self.devs[r].download(&rank.c)?;
            let b = &self.bs[r];
            for i in 0..m {
                for j in 0..n {
                    let want =
                        bf16::from_f32((0..k).map(|kk| self.a[i * k + kk].to_f32() * b[j * k + kk].to_f32()).sum());
                    if got[i * n + j].to_bits() != want.to_bits() {
                        return Ok(Err(format!(
                            "rank {r} ({m}x{n}x{k}): C[{i}][{j}] = {}, want {want}",
                            got[i * n + j]
                        )));
                    }
                }
            }
        }
        Ok(Ok(()))
    }
}

/// The gallery's example (`gemm_allgather_dsl`): two ranks on one device in the gallery's
/// harness (a `Problem`: launches one after the other on one stream). One push launch gathers
/// every m-block (both ranks' slices, `own_lo` 0) and raises every flag to epoch 1; then each
/// rank's GEMM, its own rows first, waits on the other rank's flags (already raised: the
/// waits pass, the acquire and proxy fence run) and reads the gathered A. The overlap needs
/// the launch group of [`TpGemm`]; this checks both kernels' results against the CPU product.
pub mod gallery {
    use super::*;
    use phaser::problem::{BufferId, Example, Outcome, Outputs, Problem, Size};

    pub fn examples() -> Vec<Example> {
        vec![Example {
            name: "gemm_allgather_dsl",
            about: "tensor-parallel GEMM with its all-gather fused (two ranks on one device here, launched in \
                    order): a push kernel copies A's m-blocks and raises a flag per m-block (st.release.sys, \
                    the epoch); each rank's GEMM waits on the other rank's m-blocks' flags (ld.acquire.sys), \
                    fence.proxy.async.global, then TMA-loads them; own m-blocks first",
            kernels: |_| {
                let t = TpTiles::gallery();
                Ok(vec![t.push_kernel()?, t.gemm_kernel()?])
            },
            setup,
            check,
        }]
    }

    struct Host {
        shape: (u32, u32, u32),
        gathered: BufferId<bf16>,
        flags: BufferId<u32>,
        a: Vec<bf16>,
        bs: Vec<Vec<bf16>>,
        cs: Vec<BufferId<bf16>>,
    }

    fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
        let tiles = TpTiles::gallery();
        let bm = tiles.block_m();
        let (m, n, k) = match size {
            Size::Small => (2 * bm, tiles.block_n, 2 * BLOCK_K),
            // Ragged in N and K (a partial column tile, a partial K block: TMA zero-fills, clips).
            Size::Quick => (4 * bm, 200, 136),
            Size::Full => (4096, 4096, 4096),
        };
        let ranks = 2;
        if let Some(problem) = tiles.shape_problem(ranks, m, n, k) {
            return Err(RuntimeError::BadLaunch { kernel: "gemm_allgather_dsl".into(), problem });
        }
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        let a = ternary(mu * ku, seed);
        let bs: Vec<Vec<bf16>> = (0..ranks).map(|r| ternary(nu * ku, seed ^ (0x5bd1_e995 + r as u64))).collect();
        let mut p = Problem::new(seed);
        let src = p.input(dev, &a)?;
        let gathered = p.output(dev, mu * ku, POISON)?;
        let flags = p.output(dev, (m / bm) as usize, 0u32)?;
        let push = phaser::LaunchConfig::linear(m / bm, PUSH_THREADS);
        let args = [src.into(), gathered.into(), flags.into(), k.into(), 0u32.into(), 1u32.into()];
        p.launch(tiles.push_kernel()?, push, args, [gathered.into(), flags.into()]);
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        let ma = p.tensor_map(dev, gathered, &[k64, m64], &[BLOCK_K, bm], Swizzle::B128)?;
        let rows = m / ranks as u32;
        let grid = tiles.gemm_grid(m, n, dev.sm_count()?);
        let mut cs = Vec::new();
        for (r, b) in bs.iter().enumerate() {
            let gb = p.input(dev, b)?;
            let gc = p.output(dev, mu * nu, POISON)?;
            let mb = p.tensor_map(dev, gb, &[k64, n64], &[BLOCK_K, tiles.block_n], Swizzle::B128)?;
            let mc = p.tensor_map(dev, gc, &[n64, m64], &[EPI, EPI], Swizzle::B128)?;
            let own_lo = r as u32 * rows;
            let args = [
                ma.into(),
                mb.into(),
                mc.into(),
                m.into(),
                n.into(),
                k.into(),
                flags.into(),
                1u32.into(),
                own_lo.into(),
                (own_lo + rows).into(),
            ];
            p.launch(tiles.gemm_kernel()?, phaser::LaunchConfig::linear(grid, THREADS), args, [gc.into()]);
            cs.push(gc);
        }
        p.set_host(Host { shape: (m, n, k), gathered, flags, a, bs, cs });
        Ok(p)
    }

    /// What [`check`] compares, computed once per problem ([`Problem::expected`]: the suite
    /// reruns a check per corrupted output, and the products are most of its time): the
    /// positions (every element at the small sizes; the corners and 4096 random positions at
    /// the full one) and every rank's exact C there.
    struct Expected {
        positions: Vec<(usize, usize)>,
        c: Vec<Vec<bf16>>,
    }

    fn expected(p: &Problem) -> std::rc::Rc<Expected> {
        p.expected(|| {
            let h: &Host = p.host();
            let (m, n, k) = (h.shape.0 as usize, h.shape.1 as usize, h.shape.2 as usize);
            let positions: Vec<(usize, usize)> = if m * n <= 1 << 20 {
                (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
            } else {
                let r = random_u32(2 * 4096, p.seed);
                let mut v = vec![(0, 0), (m - 1, n - 1)];
                v.extend(r.chunks(2).map(|c| (c[0] as usize % m, c[1] as usize % n)));
                v
            };
            let c = h
                .bs
                .iter()
                .map(|b| {
                    let dot =
                        |i: usize, j: usize| (0..k).map(|kk| h.a[i * k + kk].to_f32() * b[j * k + kk].to_f32()).sum();
                    positions.iter().map(|&(i, j)| bf16::from_f32(dot(i, j))).collect()
                })
                .collect();
            Expected { positions, c }
        })
    }

    /// Every rank's C equals the exact product bit for bit (every element at the small sizes;
    /// the corners and 4096 random positions at the full one).
    fn check(p: &Problem, outputs: &Outputs) -> Outcome {
        let h: &Host = p.host();
        let (m, n, k) = (h.shape.0 as usize, h.shape.1 as usize, h.shape.2 as usize);
        let expected = expected(p);
        let positions = &expected.positions;
        // Launch 0: the gathered A is A, every flag the epoch.
        let gathered = outputs.get(0, h.gathered);
        if let Some(i) = (0..m * k).find(|&i| gathered[i].to_bits() != h.a[i].to_bits()) {
            return Outcome::new(false, format!("gathered A[{}][{}] = {}, want {}", i / k, i % k, gathered[i], h.a[i]));
        }
        let flags = outputs.get(0, h.flags);
        if let Some(b) = flags.iter().position(|&f| f != 1) {
            return Outcome::new(false, format!("the flag of m-block {b} is {}, want the epoch 1", flags[b]));
        }
        for (r, &c) in h.cs.iter().enumerate() {
            // Launch 0 pushes; rank r's GEMM is launch r + 1.
            let got = outputs.get(r + 1, c);
            for (&(i, j), &want) in positions.iter().zip(&expected.c[r]) {
                if got[i * n + j].to_bits() != want.to_bits() {
                    let msg = format!(
                        "{m}x{n}x{k} rank {r} (seed {}): C[{i}][{j}] = {}, want {want}",
                        p.seed,
                        got[i * n + j]
                    );
                    return Outcome::new(false, msg);
                }
            }
        }
        Outcome::new(true, format!("{m}x{n}x{k}, 2 ranks: {} elements of each C exact", positions.len()))
    }
}
