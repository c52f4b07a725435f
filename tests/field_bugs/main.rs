//! The field's real pipeline bugs, ported to the DSL: one file per public report, each with
//! the smallest kernel that has the report's protocol bug, the finding the simulator must give
//! for it (its category, at the buggy line, naming the barrier), and the fixed kernel, which
//! runs clean with the right output. `README.md` tables them.

mod common;

mod deepep_642_war_proxy_fence;
mod flashkda_24_proxy_fence;
mod marin_8870_retired_consumers;
mod tilelang_2406_register_split;
mod tilelang_2566_one_iteration;
mod tilelang_2613_loop_back_barrier;
mod tilelang_3087_explicit_parity;
mod triton_10196_two_cta_arrival_count;
mod triton_9456_cluster_barrier_in_partition;
mod vllm_26026_arrive_not_wait;
