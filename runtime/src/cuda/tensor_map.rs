//! Encoding tensor maps for the GPU (`cuTensorMapEncodeTiled`).

use super::driver_err;
use crate::error::{Result, RuntimeError};
use crate::tensor_map::{tma_data_type, Swizzle, TensorMapDesc, TmaDataType};
use cudarc::driver::sys;

fn data_type(t: TmaDataType) -> sys::CUtensorMapDataType {
    use sys::CUtensorMapDataType_enum as D;
    match t {
        TmaDataType::U16 => D::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        TmaDataType::U32 => D::CU_TENSOR_MAP_DATA_TYPE_UINT32,
        TmaDataType::S32 => D::CU_TENSOR_MAP_DATA_TYPE_INT32,
        TmaDataType::U64 => D::CU_TENSOR_MAP_DATA_TYPE_UINT64,
        TmaDataType::S64 => D::CU_TENSOR_MAP_DATA_TYPE_INT64,
        TmaDataType::F16 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        TmaDataType::F32 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        TmaDataType::F64 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        TmaDataType::BF16 => D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    }
}

/// The driver's swizzle mode of `s`: the one whose value is [`Swizzle::tensor_map_code`].
fn swizzle(s: Swizzle) -> sys::CUtensorMapSwizzle {
    use sys::CUtensorMapSwizzle_enum as S;
    const MODES: [S; 4] = [
        S::CU_TENSOR_MAP_SWIZZLE_NONE,
        S::CU_TENSOR_MAP_SWIZZLE_32B,
        S::CU_TENSOR_MAP_SWIZZLE_64B,
        S::CU_TENSOR_MAP_SWIZZLE_128B,
    ];
    let code = s.tensor_map_code();
    MODES.into_iter().find(|m| *m as u32 == code).expect("the driver has every swizzle mode Phaser names")
}

/// Validate `desc` and encode it with the driver: the 128 bytes a kernel receives by value.
/// Needs a current CUDA context (the caller's device makes it current).
pub fn encode_tiled(desc: &TensorMapDesc) -> Result<[u64; 16]> {
    desc.validate()?;
    let rank = desc.rank();
    let Some(dtype) = tma_data_type(desc.dtype) else {
        return Err(RuntimeError::TensorMap(format!("element type {} has no TMA data type", desc.dtype)));
    };
    let dims: Vec<u64> = desc.dims.clone();
    let strides: Vec<u64> = desc.strides.clone();
    let boxes: Vec<u32> = desc.box_dims.clone();
    let elem_strides = vec![1u32; rank];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // Safety: every array has `rank` (strides: `rank - 1`) entries, as validated; `map` is a
    // 128-byte, 128-aligned `CUtensorMap` the driver writes.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            data_type(dtype),
            rank as u32,
            desc.base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem_strides.as_ptr(),
            sys::CUtensorMapInterleave_enum::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle(desc.swizzle),
            sys::CUtensorMapL2promotion_enum::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill_enum::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    r.result().map_err(driver_err(format!(
        "encoding the tensor map {desc:?} with cuTensorMapEncodeTiled (Phaser's own checks passed: please report)"
    )))?;
    Ok(map.opaque)
}
