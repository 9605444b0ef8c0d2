// TMA tensor maps (Hopper): the driver's encoder, reached through the runtime so that
// halconv needs no link to libcuda.
#pragma once

#include <cuda.h>          // CUtensorMap
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

namespace halconv::rk {

// cuTensorMapEncodeTiled of the driver the runtime loaded; null when the driver has none.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

}  // namespace halconv::rk
