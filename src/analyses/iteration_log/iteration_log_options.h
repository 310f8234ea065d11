// The iteration log's options (iteration_log_join.h): the log joined to each trace's iterations,
// in the iterations section and by the rules that read it (the facts' own options say which
// ranges are iterations: FactsOptions). Its own header, in the common room (src/CMakeLists.txt),
// so that AnalyzeOptions can hold it.
#pragma once

#include <memory>

namespace sightline {

struct IterationLog;  // importers/iteration_log/iteration_log.h

struct IterationLogOptions {
  // --iteration-log: joined to each trace's iterations; may be null.
  std::shared_ptr<const IterationLog> log;
};

}  // namespace sightline
