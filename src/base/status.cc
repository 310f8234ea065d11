#include "base/status.h"

namespace sightline {
namespace {

const char* CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kInvalidInput:
      return "invalid input";
    case StatusCode::kUnimplemented:
      return "unsupported";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kOutputError:
      return "output error";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

}  // namespace

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithPrefix(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(code_, prefix + ": " + message_);
}

Status InvalidArgumentError(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
Status NotFoundError(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
Status InvalidInputError(std::string message) {
  return Status(StatusCode::kInvalidInput, std::move(message));
}
Status UnimplementedError(std::string message) {
  return Status(StatusCode::kUnimplemented, std::move(message));
}
Status IoError(std::string message) { return Status(StatusCode::kIoError, std::move(message)); }
Status OutputError(std::string message) {
  return Status(StatusCode::kOutputError, std::move(message));
}
Status InternalError(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

}  // namespace sightline
