// The TensorRT engine exports' reader for the front door (importers/inputs.h): its sniffer (the
// first key of an export: TrtFileKindOfHead) and its place in the sniffing order. It reads with
// ReadTrtEngine (trt_engine.h).
#pragma once

#include <string_view>

#include "base/input_sniff.h"
#include "importers/trt_engine/trt_engine.h"

namespace sightline {

inline bool SniffTrt(std::string_view head) {
  return TrtFileKindOfHead(head) != TrtFileKind::kNone;
}

// JSON recognised by its first key, after the serving results and before Kineto's (whose sniffer
// takes any JSON object with one of its keys near the start).
inline constexpr ReaderSpec kTrtEngineReader = {
    "trt-engine-export",
    "TensorRT engine export (trtexec --exportLayerInfo/--exportProfile/--exportTimes, Trex "
    "metadata)",
    1300, &SniffTrt};

}  // namespace sightline
