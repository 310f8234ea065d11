// The static NVTX injection hook of the test binary: NVTX3 calls InitializeInjectionNvtx2_fnptr on
// the first NVTX call when no NVTX_INJECTION64_PATH is set. A file of its own, because a file that
// includes the NVTX implementation carries the header's weak definition of the same symbol.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

extern "C" int NVTX_API SightlineTestInitInjection(NvtxGetExportTableFunc_t get_export_table);
extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &SightlineTestInitInjection;
}
