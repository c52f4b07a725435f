//! Encoding tensor maps for the GPU (`cuTensorMapEncodeTiled`).

use super::driver_err;
use super::ffi;
use crate::error::{Result, RuntimeError};
use crate::tensor_map::{tma_data_type, Swizzle, TensorMapDesc, TmaDataType};
use cudarc::driver::sys;

fn data_type(t: TmaDataType) -> sys::CUtensorMapDataType {
    use sys::CUtensorMapDataType_enum as D;
    match t {
        TmaDataType::U8 => D::CU_TENSOR_MAP_DATA_TYPE_UINT8,
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
    let Some(dtype) = tma_data_type(desc.dtype) else {
        return Err(RuntimeError::TensorMap(format!("element type {} has no TMA data type", desc.dtype)));
    };
    let map = ffi::TiledMap {
        dtype: data_type(dtype),
        base: desc.base,
        dims: &desc.dims,
        strides: &desc.strides,
        box_dims: &desc.box_dims,
        swizzle: swizzle(desc.swizzle),
    };
    ffi::encode_tiled(&map).map_err(driver_err(format!(
        "encoding the tensor map {desc:?} with cuTensorMapEncodeTiled (Phaser's own checks passed: please report)"
    )))
}
