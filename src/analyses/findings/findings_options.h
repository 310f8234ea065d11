// The finding rules' options (findings.h). Their own header, in the common room
// (src/CMakeLists.txt), so that AnalyzeOptions can hold them.
#pragma once

namespace sightline {

struct FindingsOptions {
  bool enabled = true;  // run the rules (--no-findings leaves them out)
};

}  // namespace sightline
