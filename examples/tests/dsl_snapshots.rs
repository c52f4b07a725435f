//! PTX snapshots of every DSL gallery kernel (`cargo insta review`, or `INSTA_UPDATE=always`
//! to rewrite them after an intended change; review the diff).

use phaser_examples::gallery::dsl_seeds::*;

#[test]
fn dsl_seed_thread_arrive_wait_ptx() {
    insta::assert_snapshot!(dsl_seed_thread_arrive_wait::ptx().unwrap());
}

#[test]
fn dsl_seed_producer_consumer_ptx() {
    insta::assert_snapshot!(dsl_seed_producer_consumer::ptx().unwrap());
}

#[test]
fn dsl_seed_phase_flip_ptx() {
    insta::assert_snapshot!(dsl_seed_phase_flip::ptx_for(ROUNDS).unwrap());
}

#[test]
fn dsl_phase_tma_ptx() {
    insta::assert_snapshot!(dsl_phase_tma::ptx_for(ROUNDS).unwrap());
}
