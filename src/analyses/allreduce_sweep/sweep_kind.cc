#include "analyses/allreduce_sweep/sweep_kind.h"

namespace sightline {

const DocumentKind& AllreduceSweepKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"all-reduce sweep", "all-reduce sweeps", {InputKind::kAllreduceSweep}};
    k.role = DocumentKind::Role::kElsewhere;
    k.elsewhere = "{0}: an all-reduce sweep; `sightline allreduce plot|tune {0}` reads it";
    return k;
  }();
  return kKind;
}

}  // namespace sightline
