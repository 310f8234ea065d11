#include "nvtx_ranges.h"

#include <nvtx3/nvToolsExt.h>

namespace sightline::instrument {
namespace {

// Created on first use, so a process at level 0 makes no NVTX call at all.
nvtxDomainHandle_t Domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("sightline");
  return domain;
}

nvtxEventAttributes_t Attributes(const char* name) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name ? name : "";
  return a;
}

}  // namespace

void NvtxPush(const char* name) {
  const nvtxEventAttributes_t a = Attributes(name);
  nvtxDomainRangePushEx(Domain(), &a);
}

void NvtxPop() { nvtxDomainRangePop(Domain()); }

void NvtxMark(const char* name) {
  const nvtxEventAttributes_t a = Attributes(name);
  nvtxDomainMarkEx(Domain(), &a);
}

}  // namespace sightline::instrument
