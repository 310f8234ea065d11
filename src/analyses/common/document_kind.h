// The registry of document kinds: what `sightline analyze` and `sightline diff` do with each kind
// of file the front door recognises (importers/inputs.h). Each kind is one entry, defined in its
// own folder beside its analysis (serving results in serving/, the iteration log in iteration_log/,
// a TensorRT engine in trt_engine/, ...), and listed once in DocumentKinds() (document_kinds.cc);
// the pipeline schedules the entries by what they declare and names none of them. An entry says
// which documents it takes (the readers' kinds, so how they are recognised: each reader's
// ReaderSpec sniffer), whether they are the run's traces, join the run, or have a report of their
// own, how each is read and joined, what its diff is, and what the list of files read says of it.
// Adding a kind of document: docs/architecture.md, "Document kinds" and "What a change touches".
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/common/run_inputs.h"
#include "base/status.h"
#include "importers/inputs.h"
#include "report/report.h"

namespace sightline {

// What the pipeline knows of a run when it describes its files (Report::files).
struct FilesView {
  std::string first_member;                           // the run's first trace ("" when it has none)
  size_t members = 0;                                 // how many traces the run has
  const std::vector<std::string>* skipped = nullptr;  // files in named directories no reader took
};

struct DocumentKind {
  // What a document is to the run.
  enum class Role {
    kMember,     // a trace of the run: each is a rank of the job (or a side of a diff) and goes
                 // through the analysis registries (the pipeline's TraceSet)
    kJoins,      // read once before the traces and joined to them (RunInputs)
    kAlone,      // its own report, never with traces or another kind of its role
    kElsewhere,  // another command reads it; `analyze` refuses it with `elsewhere`
  };

  const char* name;    // "serving results"; the report's files list names the reader's kind
  const char* plural;  // "serving results", "iteration logs": for errors about two of a kind
  std::vector<InputKind> documents;  // the readers' kinds it takes
  Role role = Role::kJoins;

  // The option of `analyze` that names such a file (--requests); "" when none. A file named by it
  // must be of one of `documents`. With `named_only`, only the option makes a file this kind (the
  // eager reference: a trace that is not a rank), and it is listed first among the files read.
  const char* option = "";
  bool named_only = false;
  // After "OPTION takes the kind 'NAME', but this file is of the kind 'K' (...)" in that error;
  // "" says the usual: give it without the option, analyze sorts its inputs.
  const char* option_note = "";

  // kJoins: at most one per run; the error's end after "A and B are both PLURAL; ".
  const char* one_only = "";
  // kMember and kJoins: a run with only inputs of kinds that do not lead is refused ("no trace,
  // serving results or iteration log among the inputs").
  bool leads = false;
  // kJoins: the error when the run has no traces, which it needs ("" when it needs none).
  const char* needs_members = "";
  // kJoins: an error when the options ask for this kind of document but the run has none (--slo
  // without serving results); null when no option does.
  Status (*check_absent)(const AnalyzeOptions& options) = nullptr;
  // kJoins: reads the document into its place in `inputs`, where the analyses find it (the one
  // place a document enters a run).
  Status (*join)(const RecognisedInput& input, RunInputs& inputs) = nullptr;
  // kJoins: on process 0, after a run without traces: what the document alone states.
  void (*without_members)(const RunInputs& inputs, Report& report) = nullptr;

  // kAlone: the whole report of `inputs` (every input of this kind, in the order given).
  StatusOr<Report> (*analyze)(const std::vector<RecognisedInput>& inputs,
                              const AnalyzeOptions& options) = nullptr;
  // kAlone: how the refusal to mix names these documents ("a TensorRT engine's exports").
  const char* alone_phrase = "";

  // kElsewhere: the refusal, a format whose {0} is the file's path.
  const char* elsewhere = "";

  // `sightline diff A B` with one of this kind on each side (null: kMember kinds go through the
  // diff analyses; others are refused, with `diff_note` after the refusal).
  StatusOr<Report> (*diff)(const RecognisedInput& baseline, const RecognisedInput& candidate,
                           const AnalyzeOptions& options) = nullptr;
  // `sightline diff A1 A2 -- B1 B2` (or directories) when every input is of this kind (null:
  // kMember kinds go through the diff analyses; others are refused).
  StatusOr<Report> (*diff_runs)(const std::vector<RecognisedInput>& baseline,
                                const std::vector<RecognisedInput>& candidate,
                                const AnalyzeOptions& options) = nullptr;
  const char* diff_note = "";

  // What the list of files read says of one (InputFile::use). It may name a file among
  // run.skipped that belongs with it, and say what that one is (`companions`).
  std::string (*use)(const InputFile& file, const FilesView& run,
                     std::map<std::string, std::string>& companions) = nullptr;
};

// Every document kind, in the order the pipeline checks, reads and joins them (document_kinds.cc).
const std::vector<const DocumentKind*>& DocumentKinds();

// The kind a recognised document of `kind` is, when no option named it (the first entry taking it
// that is not `named_only`); null when none does.
const DocumentKind* DocumentKindOf(InputKind kind);

// The kind whose `option` is `option`; null when none.
const DocumentKind* DocumentKindOfOption(std::string_view option);

// "a, b or c" (with `last` = "or"), for the errors that list kinds.
std::string ListOfKinds(const std::vector<std::string>& items, std::string_view last);

}  // namespace sightline
