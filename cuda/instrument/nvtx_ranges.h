// NVTX calls of the instrument library, all in the "sightline" domain (NVTX3 header-only API from
// the CUDA toolkit). Callers check the level; these functions always emit.
#pragma once

namespace sightline::instrument {

void NvtxPush(const char* name);
void NvtxPop();
void NvtxMark(const char* name);

}  // namespace sightline::instrument
