// Status and StatusOr: how every stage reports an error a user can act on, without exceptions.
// A Status carries a code (which the CLI maps to an exit code) and a message that says what went
// wrong, where, and what to do.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace sightline {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // a bad option or value from the user
  kNotFound,         // a missing file, table or name
  kInvalidInput,     // a file we can read but whose content is malformed or unsupported
  kUnimplemented,    // a format or version we know of but do not read
  kIoError,          // reading failed
  kOutputError,      // an output (a file, standard output) could not be written
  kInternal,         // a bug in Sightline
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (for adding the file name or context).
  Status WithPrefix(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status InvalidInputError(std::string message);
Status UnimplementedError(std::string message);
Status IoError(std::string message);
Status OutputError(std::string message);
Status InternalError(std::string message);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : value_(status) { assert(!status.ok()); }  // NOLINT
  StatusOr(Status&& status) : value_(std::move(status)) {}                   // NOLINT
  StatusOr(const T& value) : value_(value) {}                                // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}                          // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(value_); }

  const T& value() const& { return std::get<T>(value_); }
  T& value() & { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> value_;
};

#define SIGHTLINE_CONCAT_INNER(a, b) a##b
#define SIGHTLINE_CONCAT(a, b) SIGHTLINE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)             \
  do {                                    \
    ::sightline::Status _status = (expr); \
    if (!_status.ok()) return _status;    \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SIGHTLINE_CONCAT(_status_or_, __LINE__), lhs, expr)

}  // namespace sightline
