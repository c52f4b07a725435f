//! The mutants: per subject, the bugs injected and the one category that names each.

use super::mutator::*;
use super::op::{ops, Role};
use super::site::{at, Site};
use phaser::runtime::sim::Category;

/// One bug: which subject, which instruction, what is done to it, and the category of its
/// cause.
pub struct Mutant {
    pub subject: &'static str,
    pub site: Site,
    pub mutator: Box<dyn Mutator>,
    pub expect: Category,
    /// `Some(why)`: a race that only some interleavings expose (caught when one schedule
    /// reports it); `None`: every schedule must.
    pub race: Option<&'static str>,
}

impl Mutant {
    /// Mark as a race, with the reason its symptom depends on the schedule.
    pub fn race(mut self, why: &'static str) -> Mutant {
        self.race = Some(why);
        self
    }
}

/// attention_dsl's K `empty` counting one arrival where two warpgroups release.
const ONE_RELEASE_COMPLETES: &str = "the first warpgroup's release completes the stage's phase: when the producer \
     is waiting, its refill races the other warpgroup's S wgmma (wgmma-operand-race); when it is not yet, the \
     second release lands on the next phase (arrival-overflow, then a deadlock)";

fn m(subject: &'static str, site: Site, mutator: impl Mutator + 'static, expect: Category) -> Mutant {
    Mutant { subject, site, mutator: Box::new(mutator), expect, race: None }
}

/// A `phase ^= 1` that does nothing.
fn skip_flip() -> Replace {
    Replace("`phase ^= 1` dropped", xor_to_mov)
}

/// `arrive.expect_tx` turned into a plain arrive.
fn bare_arrive() -> Replace {
    Replace("plain arrive (no bytes)", expect_tx_to_arrive)
}

/// Hoist statement `what` to just after `to` (a read sunk below a release).
fn after(to: Site) -> Move {
    Move { to, after: true }
}

/// Hoist a statement to just before `to`.
fn before(to: Site) -> Move {
    Move { to, after: false }
}

/// Why a missing wait on `empty` shows as one of two symptoms.
const PRODUCER_LAPS: &str = "without its wait the producer either overwrites a stage the consumer is reading (the \
                             race) or runs a full ring ahead, so the consumer finds phases completed that nobody \
                             observed (arrival-overflow)";

/// Why a consumer's missing `full` wait of a multicast pipeline shows as one of two findings.
const CONSUMER_RUNS_AHEAD: &str =
    "without its wait the consumer reads each stage either after the multicast landed but \
                                   unordered with it (async-read-race) or before any byte landed \
                                   (uninitialized-shared-read), releasing phases the producer then skips \
                                   (wrong-parity)";

/// Why a consumer's missing `full` wait of `pipeline_async_dsl` shows as one of three findings
/// (found by `examples/tests/pipeline_constructor_props.rs` under random seeds).
const CONSUMER_READS_AHEAD: &str = "without its wait the consumer reads each stage either after the producers wrote \
                                    it but unordered with them (shared-race) or before they did \
                                    (uninitialized-shared-read), and its releases complete phases of `empty` that \
                                    the producers' waits then skip (wrong-parity)";

/// Why a duplicated producer arrival of `pipeline_async_dsl` shows as one of three findings.
const ONE_PRODUCER_COMPLETES: &str = "one producer's two arrivals complete the stage's phase without the other's \
                                      word: the consumer reads that word before it was written \
                                      (uninitialized-shared-read) or unordered with the write (shared-race), or, \
                                      when the consumer is behind, the extra arrivals complete phases nobody \
                                      observed (arrival-overflow)";

/// Why `pipeline_multicast_dsl` without its release is named a missing arrival on some
/// schedules only.
const NO_RELEASE_DEADLOCK: &str = "with no release the producers wait on `empty` forever (always a deadlock); the \
                                   report names the missing arrival only when every thread of the CTAs stopped at \
                                   that wait, and some schedules leave threads blocked at another";

/// Why a missing `bar.sync` after the inits shows as one of two findings.
const INIT_RACE: &str = "without the `bar.sync` a warp may use the barrier after thread 0's init but unordered with \
                         it (init-visibility), or before it (uninitialized-barrier, noting the later init)";

pub fn mutants() -> Vec<Mutant> {
    use ops::*;
    use Category::*;
    let st = "seed_thread_arrive_wait";
    let pc = "seed_producer_consumer";
    let pf = "seed_phase_flip";
    let dt = "dsl_seed_thread_arrive_wait";
    let dp = "dsl_seed_producer_consumer";
    let df = "dsl_seed_phase_flip";
    let dm = "dsl_phase_tma";
    let fe = "fe_pipeline";
    let bp = "bulk_pipeline";
    let pt = "phase_tma_table";
    let ts = "tma_two_stage";
    let sa = "stream_axpb_s2";
    let da = "dsl_pipeline_axpb";
    let c2 = "cluster_multicast_x2";
    let c4 = "cluster_multicast_x4";
    let ca = "cp_async_mbarrier";
    let cn = "cp_async_mbarrier_noinc";
    let fa = "attention_dsl";
    let pa = "pipeline_async_dsl";
    let pm = "pipeline_multicast_dsl";
    // attention_dsl's statements (its lines are the kernel's own; the lead may add options,
    // the statements stay). In the KV loop: the V release of block j - 1 (`if j > 0 { if
    // leader { release } advance }`, the first V release).
    let v_release = at(ARRIVE, "T.pipeline.consumer_release(v_pipe, vst);").nth(0, 2).parent().parent();
    // Block 0's K release (`if leader`) and the `wait_group(0)` retiring block 0's S.
    let k0_release = at(ARRIVE, "T.pipeline.consumer_release(k_pipe, kst);").nth(0, 2).parent();
    let s0_retired = at(WGMMA_WAIT, "T.ptx.wgmma.wait_group(0);").nth(0, 3);
    // P V of block j - 1 retired, in the loop (the first `wait_group(0)` is block 0's S, the
    // third the last block's P V).
    let pv_wait = at(WGMMA_WAIT, "T.ptx.wgmma.wait_group(0);").nth(1, 3);
    // The loop's turn (the others: block 0's S turn, the first warpgroup's last, untaken turn;
    // the second warpgroup's first grant, block 0's S hand-off).
    let turn_sync = at(BAR_SYNC, "T.ptx.bar.sync(my_turn, 256);").nth(1, 3);
    let turn_arrive = at(BAR_ARRIVE, "T.ptx.bar.arrive(their_turn, 256);").nth(2, 3);
    vec![
        // seed 1: 4 threads publish, arrive on a count-4 barrier, wait, read each other's data.
        m(st, at(ARRIVE, "k.mbarrier_arrive(bar)"), Delete, MissingArrival),
        m(st, at(ARRIVE, "k.mbarrier_arrive(bar)"), Duplicate, ArrivalOverflow),
        m(st, at(INIT, "k.mbarrier_init(bar, n)"), Offset(Role::Count, 1), MissingArrival),
        m(st, at(INIT, "k.mbarrier_init(bar, n)"), Offset(Role::Count, -1), ArrivalOverflow),
        m(st, at(INIT, "k.mbarrier_init(bar, n)"), SetImm(Role::Count, 0), InvalidInitCount),
        m(st, at(INIT, "k.mbarrier_init(bar, n)"), Delete, Uninitialized),
        m(st, at(WAIT, "k.mbarrier_wait(bar, Value::u32(0))"), FlipBit(Role::Parity), WrongParity),
        m(st, at(WAIT, "k.mbarrier_wait(bar, Value::u32(0))"), Delete, SharedRace),
        m(st, at(BAR_SYNC, "k.cta_sync()"), Delete, InitVisibility),
        m(st, at(ST_SHARED, "k.st_shared(partial, tid, sq)"), Delete, UninitializedSharedRead),
        m(st, at(ARRIVE, "k.mbarrier_arrive(bar)"), before(at(ST_SHARED, "k.st_shared(partial, tid, sq)")), SharedRace),
        // seed 2: thread 0 fills `data` and arrives (count 1); threads 1-4 wait and read.
        m(pc, at(WAIT, "k.mbarrier_wait(bar, Value::u32(0))"), Delete, SharedRace),
        m(pc, at(WAIT, "k.mbarrier_wait(bar, Value::u32(0))"), FlipBit(Role::Parity), WrongParity),
        m(pc, at(ARRIVE, "k.mbarrier_arrive(bar)"), Delete, MissingArrival),
        m(pc, at(ARRIVE, "k.mbarrier_arrive(bar)"), Duplicate, ArrivalOverflow),
        m(pc, at(INIT, "k.mbarrier_init(bar, Value::u32(1))"), Offset(Role::Count, 1), MissingArrival),
        m(pc, at(BAR_SYNC, "k.cta_sync()"), Delete, InitVisibility),
        m(pc, at(ST_SHARED, "k.st_shared(data, i, v)"), Delete, UninitializedSharedRead),
        // seed 3: 32 threads, 4 rounds of arrive + wait(phase), `phase ^= 1`.
        m(pf, at(XOR, "let flipped = k.xor(Value::Reg(phase), Value::u32(1));"), skip_flip(), StaleParity),
        m(pf, at(ARRIVE, "k.mbarrier_arrive(bar)"), Delete, MissingArrival),
        m(pf, at(ARRIVE, "k.mbarrier_arrive(bar)"), Duplicate, ArrivalOverflow),
        m(pf, at(INIT, "k.mbarrier_init(bar, Value::u32(32))"), Offset(Role::Count, 1), MissingArrival),
        m(pf, at(WAIT, "k.mbarrier_wait(bar, Value::Reg(phase))"), FlipBit(Role::Parity), WrongParity),
        m(pf, at(MOV_IMM, "let phase = k.var(Value::u32(0));"), FlipBit(Role::Source), WrongParity),
        m(pf, at(INIT, "k.mbarrier_init(bar, Value::u32(32))"), Delete, Uninitialized),
        // The seeds in the DSL.
        m(dt, at(ARRIVE, "T.ptx.mbarrier.arrive(bar.ptr_to([0]));"), Delete, MissingArrival),
        m(dt, at(ARRIVE, "T.ptx.mbarrier.arrive(bar.ptr_to([0]));"), Duplicate, ArrivalOverflow),
        m(dt, at(WAIT, "T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);"), Delete, SharedRace),
        m(dt, at(ST_SHARED, "partial[tid] = tid * tid;"), Delete, UninitializedSharedRead),
        m(dt, at(INIT, "T.ptx.mbarrier.init(bar.ptr_to([0]), num_threads);"), Offset(Role::Count, -1), ArrivalOverflow),
        m(dp, at(WAIT, "T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);"), FlipBit(Role::Parity), WrongParity),
        m(dp, at(ARRIVE, "T.ptx.mbarrier.arrive(bar.ptr_to([0]));"), Delete, MissingArrival),
        m(dp, at(INIT, "T.ptx.mbarrier.init(bar.ptr_to([0]), 1);"), Delete, Uninitialized),
        m(df, at(XOR, "phase ^= 1;"), skip_flip(), StaleParity),
        m(df, at(INIT, "T.ptx.mbarrier.init(bar.ptr_to([0]), 32);"), SetImm(Role::Count, 0), InvalidInitCount),
        m(df, at(BAR_SYNC, "T.cuda.cta_sync();"), Delete, InitVisibility),
        // The seeds' `phase_tma` loop in the DSL (thread 0 arrives on the stage, all wait).
        m(dm, at(ARRIVE, "T.ptx.mbarrier.arrive(tma_bar.ptr_to([stage]));"), Delete, MissingArrival),
        m(dm, at(ARRIVE, "T.ptx.mbarrier.arrive(tma_bar.ptr_to([stage]));"), Duplicate, ArrivalOverflow),
        m(dm, at(XOR, "phase_tma ^= 1;"), skip_flip(), StaleParity),
        m(dm, at(INIT, "T.ptx.mbarrier.init(tma_bar.ptr_to([1]), 1);"), Delete, Uninitialized),
        // fe_pipeline: the producer warp stores each stage and arrives on `full` (32 arrivals);
        // the consumer warp waits, reads, arrives on `empty`.
        m(fe, at(WAIT, "k.mbarrier_wait(e, Value::Reg(phase));"), Delete, SharedRace).race(PRODUCER_LAPS),
        m(fe, at(WAIT, "k.mbarrier_wait(f, Value::Reg(phase));"), Delete, SharedRace),
        m(fe, at(WAIT, "k.mbarrier_wait(e, Value::Reg(phase));"), FlipBit(Role::Parity), WrongParity),
        m(fe, at(WAIT, "k.mbarrier_wait(f, Value::Reg(phase));"), FlipBit(Role::Parity), WrongParity),
        m(fe, at(MOV_IMM, "let phase = k.var(Value::u32(1));"), FlipBit(Role::Source), WrongParity),
        m(fe, at(MOV_IMM, "let phase = k.var(Value::u32(0));"), FlipBit(Role::Source), WrongParity),
        m(fe, at(XOR, "let x = k.xor(Value::Reg(phase), Value::u32(1));").nth(0, 2), skip_flip(), StaleParity),
        m(fe, at(XOR, "let x = k.xor(Value::Reg(phase), Value::u32(1));").nth(1, 2), skip_flip(), StaleParity),
        m(fe, at(ARRIVE, "k.mbarrier_arrive(f);"), Delete, MissingArrival),
        m(fe, at(ARRIVE, "k.mbarrier_arrive(e);"), Delete, MissingArrival),
        m(fe, at(ARRIVE, "k.mbarrier_arrive(f);"), Duplicate, ArrivalOverflow),
        m(fe, at(ARRIVE, "k.mbarrier_arrive(e);"), Duplicate, ArrivalOverflow),
        m(
            fe,
            at(INIT, "k.mbarrier_init(f, Value::u32(full_count));").nth(0, 2),
            Offset(Role::Count, 1),
            MissingArrival,
        ),
        m(fe, at(INIT, "k.mbarrier_init(e, Value::u32(32));").nth(1, 2), Offset(Role::Count, -1), IncompletePhase),
        m(
            fe,
            at(INIT, "k.mbarrier_init(f, Value::u32(full_count));").nth(0, 2),
            Offset(Role::Count, -1),
            IncompletePhase,
        ),
        m(fe, at(BAR_SYNC, "k.cta_sync();"), Delete, InitVisibility),
        m(fe, at(ST_SHARED, "k.st_shared(buf, j, v);"), Delete, UninitializedSharedRead),
        m(fe, at(LD_SHARED, "let v = k.ld_shared(buf, j);"), after(at(ARRIVE, "k.mbarrier_arrive(e);")), SharedRace),
        m(fe, at(ST_SHARED, "k.st_shared(buf, j, v);"), after(at(ARRIVE, "k.mbarrier_arrive(f);")), SharedRace),
        // bulk_pipeline: one elected producer lane fills stages with bulk copies; the consumer
        // warp writes its results through a staging buffer and a bulk store.
        m(bp, at(FENCE_PROXY_ASYNC, "k.fence_proxy_async(ProxySpace::SharedCta);"), Delete, ProxyFence),
        m(bp, at(BULK_WAIT, "k.bulk_wait_group(0, true)"), Delete, AsyncWriteRace),
        m(bp, at(BULK_WAIT, "k.bulk_wait_group(0, false)"), Delete, ExitedCtaAccess),
        m(
            bp,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(f, Value::u32(TILE * 4));"),
            Offset(Role::Bytes, 16),
            TxImbalance,
        ),
        m(
            bp,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(f, Value::u32(TILE * 4));"),
            Offset(Role::Bytes, -16),
            EarlyPhaseCompletion,
        ),
        m(
            bp,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(f, Value::u32(TILE * 4));"),
            bare_arrive(),
            EarlyPhaseCompletion,
        ),
        m(bp, at(BULK_LOAD, "k.bulk_load(dst, src, Value::u32(TILE * 4), f);"), Offset(Role::Bytes, -16), TxImbalance),
        m(
            bp,
            at(BULK_LOAD, "k.bulk_load(dst, src, Value::u32(TILE * 4), f);"),
            Offset(Role::Bytes, 16),
            EarlyPhaseCompletion,
        ),
        m(bp, at(BULK_LOAD, "k.bulk_load(dst, src, Value::u32(TILE * 4), f);"), Delete, TxImbalance),
        m(bp, at(WAIT, "k.mbarrier_wait(e, Value::Reg(phase));"), Delete, AsyncWriteRace),
        m(bp, at(WAIT, "k.mbarrier_wait(f, Value::Reg(phase));"), Delete, AsyncReadRace),
        m(bp, at(WAIT, "k.mbarrier_wait(f, Value::Reg(phase));"), FlipBit(Role::Parity), WrongParity),
        m(bp, at(XOR, "let x = k.xor(Value::Reg(phase), Value::u32(1));").nth(0, 2), skip_flip(), StaleParity),
        m(bp, at(XOR, "let x = k.xor(Value::Reg(phase), Value::u32(1));").nth(1, 2), skip_flip(), StaleParity),
        m(bp, at(BAR_SYNC, "k.bar_sync(Value::u32(1), Some(Value::u32(32)));").nth(0, 2), Delete, SharedRace),
        m(bp, at(BAR_SYNC, "k.bar_sync(Value::u32(1), Some(Value::u32(32)));").nth(1, 2), Delete, AsyncReadRace),
        m(bp, at(ST_SHARED, "k.st_shared(staging, lane, v);"), Delete, UninitializedSharedRead),
        m(
            bp,
            at(BAR_SYNC, "k.bar_sync(Value::u32(1), Some(Value::u32(32)));").nth(0, 2),
            Offset(Role::Count, 32),
            Deadlock,
        ),
        m(bp, at(ARRIVE, "k.mbarrier_arrive(e);"), Delete, MissingArrival),
        m(bp, at(INIT, "k.mbarrier_init(e, Value::u32(32));").nth(1, 2), Offset(Role::Count, 1), MissingArrival),
        m(bp, at(BAR_SYNC, "k.cta_sync();"), Delete, InitVisibility).race(INIT_RACE),
        m(
            bp,
            at(LD_SHARED, "let b = k.ld_shared(buf, j2);"),
            after(at(ARRIVE, "k.mbarrier_arrive(e);")),
            AsyncWriteRace,
        ),
        m(
            bp,
            at(FENCE_PROXY_ASYNC, "k.fence_proxy_async(ProxySpace::SharedCta);"),
            before(at(ST_SHARED, "k.st_shared(staging, lane, v);")),
            ProxyFence,
        ),
        m(bp, at(BULK_COMMIT, "k.bulk_commit_group();"), Delete, AsyncWriteRace),
        // phase_tma_table: thread 0 keeps two stages filled with bulk copies; all 32 threads
        // wait on `tma_bar[stage]` with one `phase` flipped after stage 1.
        m(pt, at(WAIT, "k.mbarrier_wait(bar, Value::Reg(phase));"), FlipBit(Role::Parity), WrongParity),
        m(pt, at(XOR, "let f = k.xor(Value::Reg(phase), Value::u32(1));"), skip_flip(), StaleParity),
        m(
            pt,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(b, Value::u32(TILE * 4));").nth(0, 2),
            Offset(Role::Bytes, 16),
            TxImbalance,
        ),
        m(
            pt,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(bar, Value::u32(TILE * 4));"),
            Offset(Role::Bytes, -16),
            EarlyPhaseCompletion,
        ),
        m(
            pt,
            at(BULK_LOAD, "k.bulk_load(dst, src, Value::u32(TILE * 4), b);").nth(1, 2),
            Offset(Role::Bytes, -16),
            TxImbalance,
        ),
        m(pt, at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(b, Value::u32(TILE * 4));").nth(0, 2), Delete, MissingArrival),
        m(pt, at(BAR_SYNC, "k.cta_sync();").nth(1, 2), Delete, AsyncWriteRace),
        m(pt, at(BAR_SYNC, "k.cta_sync();").nth(0, 2), Delete, InitVisibility),
        m(pt, at(WAIT, "k.mbarrier_wait(bar, Value::Reg(phase));"), OtherStage(Role::Barrier), AsyncReadRace),
        m(pt, at(WAIT, "k.mbarrier_wait(bar, Value::Reg(phase));"), Delete, AsyncReadRace),
        m(pt, at(BULK_LOAD, "k.bulk_load(dst, src, Value::u32(TILE * 4), bar);"), Delete, TxImbalance),
        // tma_two_stage: the seeds' manual two-stage TMA loop (thread 0 refills a stage once
        // all 128 threads read it).
        m(
            ts,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(b, Value::u32(TILE_BYTES));").nth(0, 2),
            bare_arrive(),
            EarlyPhaseCompletion,
        ),
        m(
            ts,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(bar, Value::u32(TILE_BYTES));"),
            Offset(Role::Bytes, 16),
            TxImbalance,
        ),
        m(
            ts,
            at(EXPECT_TX, "k.mbarrier_arrive_expect_tx(b, Value::u32(TILE_BYTES));").nth(1, 2),
            Offset(Role::Bytes, -16),
            EarlyPhaseCompletion,
        ),
        m(ts, at(MOV_IMM, "let phase_tma = k.var(Value::u32(0));"), FlipBit(Role::Source), WrongParity),
        m(ts, at(XOR, "let f = k.xor(Value::Reg(phase_tma), Value::u32(1));"), skip_flip(), StaleParity),
        m(ts, at(BAR_SYNC, "k.cta_sync();").nth(1, 2), Delete, AsyncWriteRace),
        m(ts, at(BAR_SYNC, "k.cta_sync();").nth(0, 2), Delete, InitVisibility),
        m(ts, at(TMA_LOAD, "k.tma_load(dst, map, &[Value::u32(0), row], bar);"), Delete, TxImbalance),
        m(ts, at(INIT, "k.mbarrier_init(b, Value::u32(1));").nth(1, 2), Offset(Role::Count, 1), MissingArrival),
        m(ts, at(INIT, "k.mbarrier_init(b, Value::u32(1));").nth(0, 2), Delete, Uninitialized),
        // stream_axpb, S = 2: a warp-specialized TMA pipeline ([`Pipeline`] bookkeeping), each
        // consumer warp writing through two staging buffers and TMA stores.
        m(
            sa,
            at(EXPECT_TX, "pipe.producer_commit(k, &st, Value::u32(tile_bytes))"),
            bare_arrive(),
            EarlyPhaseCompletion,
        ),
        m(
            sa,
            at(EXPECT_TX, "pipe.producer_commit(k, &st, Value::u32(tile_bytes))"),
            Offset(Role::Bytes, 1024),
            TxImbalance,
        ),
        m(
            sa,
            at(EXPECT_TX, "pipe.producer_commit(k, &st, Value::u32(tile_bytes))"),
            Offset(Role::Bytes, -1024),
            EarlyPhaseCompletion,
        ),
        m(sa, at(MOV_IMM, "let st = pipe.producer_start_state(k);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(sa, at(MOV_IMM, "let st = pipe.consumer_start_state(k);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(sa, at(ARRIVE, "pipe.consumer_release(k, &st);"), Delete, MissingArrival),
        m(sa, at(FENCE_PROXY_ASYNC, "k.fence_proxy_async(ProxySpace::SharedCta);"), Delete, ProxyFence),
        m(sa, at(BULK_WAIT, "k.bulk_wait_group(OUT_BUFS - 1, true)"), Delete, AsyncWriteRace),
        m(
            sa,
            at(BULK_WAIT, "k.bulk_wait_group(OUT_BUFS - 1, true)"),
            Replace("wait for one group fewer", wait_group_plus_one),
            AsyncWriteRace,
        ),
        m(sa, at(BULK_WAIT, "k.bulk_wait_group(0, false)"), Delete, ExitedCtaAccess),
        m(sa, at(BULK_COMMIT, "k.bulk_commit_group();"), Delete, AsyncWriteRace),
        m(sa, at(WARP_SYNC, "pipe.consumer_release(k, &st);"), Delete, AsyncWriteRace),
        m(
            sa,
            at(WARP_SYNC, "pipe.consumer_release(k, &st);"),
            Replace("mask without lane 31", warp_sync_partial),
            AsyncWriteRace,
        ),
        m(sa, at(WARP_SYNC, "k.warp_sync();").nth(0, 2), Delete, SharedRace),
        m(sa, at(WARP_SYNC, "k.warp_sync();").nth(1, 2), Delete, AsyncReadRace),
        m(sa, at(BAR_SYNC, "pipe.init(&mut k);"), Delete, InitVisibility),
        m(sa, at(WAIT, "pipe.consumer_wait(k, &st);"), Delete, AsyncReadRace),
        m(sa, at(WAIT, "pipe.producer_acquire(k, &st);"), Delete, AsyncWriteRace),
        m(sa, at(XOR, "st.advance(k);").nth(1, 2), skip_flip(), StaleParity),
        m(sa, at(TMA_LOAD, "k.tma_load(dst, in_map, &[col, row], full);"), Delete, TxImbalance),
        m(sa, at(INIT, "pipe.init(&mut k);").nth(1, 4), Offset(Role::Count, -1), IncompletePhase),
        m(
            sa,
            at(LD_SHARED, "xs.push(k.ld_raw(Space::Shared, Type::F32, src, off as i32));").nth(15, 16),
            after(at(IF, "pipe.consumer_release(k, &st);")),
            AsyncWriteRace,
        ),
        m(
            sa,
            at(FENCE_PROXY_ASYNC, "k.fence_proxy_async(ProxySpace::SharedCta);"),
            after(at(IF, "k.if_then(is_lane0, |k| {")),
            ProxyFence,
        ),
        // pipeline_async_dsl, S = 2 (`T.pipeline.new_async`): two producer threads write their
        // word of a stage and arrive on `full` (2 arrivals); one consumer reads and releases.
        m(pa, at(ARRIVE, "T.pipeline.producer_arrive(pipe, write);"), Delete, MissingArrival),
        m(pa, at(ARRIVE, "T.pipeline.producer_arrive(pipe, write);"), Duplicate, ArrivalOverflow)
            .race(ONE_PRODUCER_COMPLETES),
        m(pa, at(ARRIVE, "T.pipeline.consumer_release(pipe, read);"), Delete, MissingArrival),
        m(pa, at(WAIT, "T.pipeline.consumer_wait(pipe, read);"), Delete, SharedRace).race(CONSUMER_READS_AHEAD),
        m(pa, at(WAIT, "T.pipeline.producer_acquire(pipe, write);"), Delete, SharedRace).race(PRODUCER_LAPS),
        m(pa, at(INIT, "T.pipeline.init(pipe);").nth(0, 4), Offset(Role::Count, 1), MissingArrival),
        m(
            pa,
            at(MOV_IMM, "let write = T.pipeline.producer_state(pipe);").nth(1, 2),
            FlipBit(Role::Source),
            WrongParity,
        ),
        m(pa, at(MOV_IMM, "let read = T.pipeline.consumer_state(pipe);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(pa, at(XOR, "T.pipeline.advance(read);"), skip_flip(), StaleParity),
        m(
            pa,
            at(ST_SHARED, "ring[T.pipeline.stage(write) * 2 + warp] = i * 2 + warp;"),
            after(at(ARRIVE, "T.pipeline.producer_arrive(pipe, write);")),
            SharedRace,
        ),
        // pipeline_multicast_dsl, S = 2 (`T.pipeline.new_multicast`, a 2 x 1 cluster): each
        // stage is filled by the CTAs of its row and column and released to them. Its stages
        // carry no data (CUTLASS's test), so a deleted wait has nothing to race on: the
        // counting mutants are its bugs.
        m(pm, at(REMOTE_ARRIVE, "T.pipeline.consumer_release(pipe, release);"), Delete, MissingArrival)
            .race(NO_RELEASE_DEADLOCK),
        m(pm, at(REMOTE_ARRIVE, "T.pipeline.consumer_release(pipe, release);"), Duplicate, ArrivalOverflow),
        m(pm, at(CLUSTER_ARRIVE, "T.ptx.barrier.cluster.arrive();"), Delete, Deadlock),
        m(
            pm,
            at(EXPECT_TX, "T.pipeline.producer_commit(pipe, st, tx_bytes);").nth(0, 2),
            Offset(Role::Bytes, 4),
            TxImbalance,
        ),
        m(pm, at(INIT, "T.pipeline.init(pipe);").nth(0, 4), Offset(Role::Count, 1), MissingArrival),
        m(
            pm,
            at(MOV_IMM, "let write = T.pipeline.producer_state(pipe);").nth(1, 2),
            FlipBit(Role::Source),
            WrongParity,
        ),
        m(pm, at(MOV_IMM, "let read = T.pipeline.consumer_state(pipe);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(pm, at(XOR, "T.pipeline.advance(read);").nth(1, 2), skip_flip(), StaleParity),
        // dsl_pipeline_axpb, S = 2: the same protocol written with `T.pipeline.*`.
        m(
            da,
            at(EXPECT_TX, "let full = T.pipeline.producer_commit(pipe, st, TILE_ELEMS * 4);"),
            Offset(Role::Bytes, -1024),
            EarlyPhaseCompletion,
        ),
        m(
            da,
            at(EXPECT_TX, "let full = T.pipeline.producer_commit(pipe, st, TILE_ELEMS * 4);"),
            Offset(Role::Bytes, 1024),
            TxImbalance,
        ),
        m(
            da,
            at(EXPECT_TX, "let full = T.pipeline.producer_commit(pipe, st, TILE_ELEMS * 4);"),
            bare_arrive(),
            EarlyPhaseCompletion,
        ),
        m(da, at(ARRIVE, "T.pipeline.consumer_release(pipe, st);"), Delete, MissingArrival),
        m(da, at(WAIT, "T.pipeline.consumer_wait(pipe, st);"), Delete, AsyncReadRace),
        m(da, at(WAIT, "T.pipeline.producer_acquire(pipe, st);"), Delete, AsyncWriteRace),
        m(da, at(WARP_SYNC, "T.pipeline.consumer_release(pipe, st);"), Delete, AsyncWriteRace),
        m(da, at(MOV_IMM, "let st = T.pipeline.consumer_state(pipe);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(da, at(MOV_IMM, "let st = T.pipeline.producer_state(pipe);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(da, at(XOR, "T.pipeline.advance(st);").nth(1, 2), skip_flip(), StaleParity),
        m(da, at(INIT, "T.pipeline.init(pipe);").nth(0, 4), Offset(Role::Count, 1), MissingArrival),
        m(da, at(TMA_LOAD, "T.ptx.cp_async.bulk.tensor.g2s(dst, x, [0, t * TILE_ROWS], full);"), Delete, TxImbalance),
        // cluster_multicast: every CTA multicasts its slice of each tile into the whole
        // cluster; consumers release the stage in every CTA (remote arrives).
        m(c2, at(TMA_LOAD_MULTICAST, "k.tma_load_multicast("), SetImm(Role::Mask, 0b01), TxImbalance),
        m(
            c2,
            at(EXPECT_TX, "pipe.producer_commit(k, &st, Value::u32(TILE_BYTES))"),
            Offset(Role::Bytes, -4096),
            EarlyPhaseCompletion,
        ),
        m(
            c2,
            at(EXPECT_TX, "pipe.producer_commit(k, &st, Value::u32(TILE_BYTES))"),
            bare_arrive(),
            EarlyPhaseCompletion,
        ),
        m(c2, at(REMOTE_ARRIVE, "pipe.consumer_release(k, &st);").nth(1, 2), Delete, MissingArrival),
        m(c2, at(MOV_IMM, "let st = pipe.producer_start_state(k);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(c2, at(MOV_IMM, "let st = pipe.consumer_start_state(k);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(c2, at(WARP_SYNC, "pipe.consumer_release(k, &st);"), Delete, AsyncWriteRace),
        m(c2, at(CLUSTER_ARRIVE, "k.cluster_sync();"), Delete, Deadlock),
        m(c2, at(WAIT, "pipe.consumer_wait(k, &st);"), Delete, AsyncReadRace).race(CONSUMER_RUNS_AHEAD),
        m(c2, at(WAIT, "pipe.producer_acquire(k, &st);"), Delete, AsyncWriteRace),
        m(c2, at(XOR, "st.advance(k);").nth(1, 2), skip_flip(), StaleParity),
        m(c4, at(TMA_LOAD_MULTICAST, "k.tma_load_multicast("), SetImm(Role::Mask, 0b0111), TxImbalance),
        m(
            c4,
            at(EXPECT_TX, "pipe.producer_commit(k, &st, Value::u32(TILE_BYTES))"),
            Offset(Role::Bytes, -2048),
            EarlyPhaseCompletion,
        ),
        m(c4, at(REMOTE_ARRIVE, "pipe.consumer_release(k, &st);").nth(3, 4), Delete, MissingArrival),
        m(c4, at(CLUSTER_ARRIVE, "k.cluster_sync();"), Delete, Deadlock),
        // cp.async completion through cp.async.mbarrier.arrive (waits are test_wait loops).
        m(ca, at(ARRIVE, "k.mbarrier_arrive(f);"), Delete, MissingArrival),
        m(ca, at(ARRIVE, "k.mbarrier_arrive(e);"), Delete, MissingArrival),
        m(
            ca,
            at(CP_ASYNC_ARRIVE, "k.cp_async_mbarrier_arrive(f, noinc);"),
            Replace("toggle .noinc", toggle_noinc),
            AsyncReadRace,
        ),
        m(ca, at(CP_ASYNC_ARRIVE, "k.cp_async_mbarrier_arrive(f, noinc);"), Delete, AsyncReadRace),
        m(ca, at(MOV_IMM, "let st = PipelineState::new(k, STAGES, 0);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(ca, at(MOV_IMM, "let st = PipelineState::new(k, STAGES, 1);").nth(1, 2), FlipBit(Role::Source), WrongParity),
        m(ca, at(WARP_SYNC, "k.warp_sync();"), Delete, AsyncWriteRace),
        m(ca, at(LOOP, "wait_parity(k, f, st.phase());"), Delete, AsyncReadRace),
        m(ca, at(LOOP, "wait_parity(k, e, st.phase());"), Delete, AsyncWriteRace),
        m(ca, at(XOR, "st.advance(k);").nth(1, 2), skip_flip(), StaleParity),
        m(ca, at(XOR, "st.advance(k);").nth(0, 2), skip_flip(), StaleParity),
        m(cn, at(CP_ASYNC_ARRIVE, "k.cp_async_mbarrier_arrive(f, noinc);"), Delete, MissingArrival),
        m(
            cn,
            at(CP_ASYNC_ARRIVE, "k.cp_async_mbarrier_arrive(f, noinc);"),
            Replace("toggle .noinc", toggle_noinc),
            MissingArrival,
        ),
        m(cn, at(BAR_SYNC, "k.cta_sync();"), Delete, InitVisibility),
        m(cn, at(CP_ASYNC, "k.cp_async(dst, src, SLOT_BYTES);"), Delete, UninitializedSharedRead),
        m(
            cn,
            at(CP_ASYNC, "k.cp_async(dst, src, SLOT_BYTES);"),
            after(at(CP_ASYNC_ARRIVE, "k.cp_async_mbarrier_arrive(f, noinc);")),
            AsyncReadRace,
        ),
        m(
            cn,
            at(INIT, "k.mbarrier_init(f, Value::u32(PRODUCERS));").nth(0, 3),
            Offset(Role::Count, -1),
            IncompletePhase,
        ),
        m(
            cn,
            at(INIT, "k.mbarrier_init(e, Value::u32(CONSUMER_WARPS));").nth(2, 3),
            SetImm(Role::Count, 0),
            InvalidInitCount,
        ),
        // attention_dsl (issue 20's injected bugs): a TMA producer warp fills the K and V rings,
        // two consumer warpgroups run S = Q Kᵀ and O += P V on wgmma, in ping-pong through
        // named barriers 3 and 4.
        // (a) A stage released before the `wgmma.wait_group` retiring the wgmmas reading it.
        // (The loop's K release moved before its `wait_group(1)` is not a mutant here: at the
        // suite's size, 3 KV blocks on 2 stages, no refill follows the loop's releases, so
        // nothing reads or writes differently; block 0's release is refilled by block 2.)
        m(fa, k0_release, before(s0_retired), WgmmaOperandRace),
        m(fa, pv_wait, after(v_release), WgmmaOperandRace),
        // (b) P packed into the A fragment while the P V wgmma still reads it (the wait for P V
        // moved after the first pack), and the S wgmma issued with no `wgmma.fence` after the
        // pack read S (and the softmax wrote it).
        // (The last statement of the pack: the 64th register copy, BN / 16 k-steps of 4.)
        m(fa, pv_wait, after(at(MOV_REG, "T.fragment.to_a(p[kk], s, kk);").nth(63, 64)), WgmmaRegisterRace),
        // The loop's S fence (the first is block 0's S, the third the P V's).
        m(fa, at(WGMMA_FENCE, "T.ptx.wgmma.fence();").nth(1, 3), Delete, MissingWgmmaFence),
        // (c) A ping-pong barrier's count off by one warp.
        m(fa, turn_sync, Offset(Role::Count, -32), NamedBarrier),
        m(fa, turn_sync, Offset(Role::Count, 32), NamedBarrier),
        m(fa, turn_arrive, Offset(Role::Count, -32), NamedBarrier),
        // (d) A K stage refilled by TMA while the S wgmma still reads it (no wait on `empty`).
        m(fa, at(WAIT, "T.pipeline.producer_acquire(k_pipe, kst);"), Delete, AsyncWriteRace),
        m(fa, at(INIT, "T.pipeline.init(k_pipe);").nth(1, 4), Offset(Role::Count, -1), WgmmaOperandRace)
            .race(ONE_RELEASE_COMPLETES),
    ]
}
