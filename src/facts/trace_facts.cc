#include "facts/trace_facts.h"

#include "facts/metric_samples.h"

namespace sightline {

TraceFacts::TraceFacts(const Trace& trace, FactsOptions options, FactsInputs inputs)
    : trace_(&trace),
      options_(std::move(options)),
      inputs_(std::move(inputs)),
      gpu_(*trace_),
      kernels_(*trace_, gpu_),
      host_(*trace_, options_),
      graphs_(*trace_, inputs_, host_),
      loop_(*trace_, options_, gpu_, host_, graphs_) {}

// The holders borrow the trace, which does not move when its owner does.
TraceFacts::TraceFacts(std::unique_ptr<const Trace> trace, FactsOptions options, FactsInputs inputs)
    : TraceFacts(*trace, std::move(options), std::move(inputs)) {
  owned_ = std::move(trace);
}

TraceFacts::~TraceFacts() = default;

std::vector<std::function<void()>> TraceFacts::IndependentFirstFacts() {
  return {[this] { gpu_.GpuDevices(); }, [this] { host_.Launches(); }};
}

const MetricSamples& TraceFacts::samples() {
  std::call_once(samples_once_, [this] { samples_ = std::make_unique<MetricSamples>(*trace_); });
  return *samples_;
}

}  // namespace sightline
