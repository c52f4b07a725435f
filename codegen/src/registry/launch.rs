//! Thread, block, warp and cluster coordinates, and the launch shape a kernel declares.

use crate::ir::Dim;

ops! {
    /// `%tid.x`
    "thread_idx" ["cuda:threadIdx.x"] () -> U32 = |k, call| k.thread_idx(Dim::X);
    /// `%tid.y`
    "thread_idx_y" ["cuda:threadIdx.y"] () -> U32 = |k, call| k.thread_idx(Dim::Y);
    /// `%tid.z`
    "thread_idx_z" ["cuda:threadIdx.z"] () -> U32 = |k, call| k.thread_idx(Dim::Z);
    /// `%ctaid.x`
    "block_idx" ["cuda:blockIdx.x"] () -> U32 = |k, call| k.block_idx(Dim::X);
    /// `%ctaid.y`
    "block_idx_y" ["cuda:blockIdx.y"] () -> U32 = |k, call| k.block_idx(Dim::Y);
    /// `%ctaid.z`
    "block_idx_z" ["cuda:blockIdx.z"] () -> U32 = |k, call| k.block_idx(Dim::Z);
    /// `%ntid.x`
    "block_dim" ["cuda:blockDim.x"] () -> U32 = |k, call| k.block_dim(Dim::X);
    /// `%ntid.y`
    "block_dim_y" ["cuda:blockDim.y"] () -> U32 = |k, call| k.block_dim(Dim::Y);
    /// `%ntid.z`
    "block_dim_z" ["cuda:blockDim.z"] () -> U32 = |k, call| k.block_dim(Dim::Z);
    /// `%nctaid.x`
    "grid_dim" ["cuda:gridDim.x"] () -> U32 = |k, call| k.grid_dim(Dim::X);
    /// `%nctaid.y`
    "grid_dim_y" ["cuda:gridDim.y"] () -> U32 = |k, call| k.grid_dim(Dim::Y);
    /// `%nctaid.z`
    "grid_dim_z" ["cuda:gridDim.z"] () -> U32 = |k, call| k.grid_dim(Dim::Z);
    /// `%laneid`
    "lane_idx" ["cutlass:canonical_lane_idx"] () -> U32 = |k, call| k.lane_idx();
    /// `tid.x / 32`
    "warp_idx" ["cutlass:canonical_warp_idx"] () -> U32 = |k, call| k.warp_idx();
    /// `tid.x / 128`
    "warpgroup_idx" ["cutlass:canonical_warp_group_idx"] () -> U32 = |k, call| k.warpgroup_idx();
    /// `%cluster_ctaid.x`
    "cluster_ctaid" () -> U32 = |k, call| k.cluster_ctaid(Dim::X);
    /// `%cluster_ctaid.y`
    "cluster_ctaid_y" () -> U32 = |k, call| k.cluster_ctaid(Dim::Y);
    /// `%cluster_ctaid.z`
    "cluster_ctaid_z" () -> U32 = |k, call| k.cluster_ctaid(Dim::Z);
    /// `%cluster_ctarank`
    "cluster_cta_rank" ["cute:block_rank_in_cluster"] () -> U32 = |k, call| k.cluster_cta_rank();
    /// `%cluster_nctarank`
    "cluster_size" () -> U32 = |k, call| k.cluster_size();

    /// `.reqntid x, y, z`: the launch must use exactly this block
    "require_block" (x: Const = 128, y: Const, z: Const) -> Unit = |k, call| {
        k.require_block(x, y, z);
    };
    /// `.maxntid x, y, z`
    "max_block" (x: Const = 128, y: Const, z: Const) -> Unit = |k, call| {
        k.max_block(x, y, z);
    };
    /// `.reqnctapercluster x, y, z` (+ `.explicitcluster`)
    "cluster_dims" (x: Const = 2, y: Const, z: Const) -> Unit = |k, call| {
        k.cluster(x, y, z);
    };
    /// `.maxnreg n`
    "max_registers" (n: Const = 128) -> Unit = |k, call| {
        k.max_registers(n);
    };
    /// `.minnctapersm n`
    "min_blocks_per_sm" (n: Const) -> Unit = |k, call| {
        k.min_blocks_per_sm(n);
    };
}
