#include "base/exceptions.h"

#include <fmt/format.h>

#include <new>
#include <stdexcept>
#include <system_error>

#include "base/input_limits.h"

namespace sightline {

Status StatusOfException(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    const UsableMemoryInfo m = UsableMemory();
    return InvalidInputError(fmt::format(
        "out of memory: this run needed more memory than the process could get (it may use "
        "{:.1f} GiB: {}). Analyze fewer or smaller files at once (one trace, or --jobs 1), or give "
        "the process more memory (ulimit -v, the container's memory limit) or a larger machine",
        static_cast<double>(m.bytes) / (1024.0 * 1024 * 1024), m.source));
  } catch (const std::length_error& x) {
    return InvalidInputError(fmt::format(
        "out of memory: a table would grow beyond what can be allocated ({}); the input is larger "
        "than Sightline can hold, or damaged",
        x.what()));
  } catch (const std::system_error& x) {
    return IoError(fmt::format(
        "the system refused a resource this run needs: {}. With few processes or threads allowed "
        "(ulimit -u) or little memory left, raise the limit, or run with fewer threads (--jobs "
        "1)",
        x.what()));
  } catch (const std::exception& x) {
    return InternalError(fmt::format("unexpected error (a bug in Sightline): {}", x.what()));
  } catch (...) {
    return InternalError("unexpected error (a bug in Sightline): an unknown exception");
  }
}

}  // namespace sightline
