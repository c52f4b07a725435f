//! Encoding tensor maps for the GPU (`cuTensorMapEncodeTiled`).
