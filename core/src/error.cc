#include "opreg/core/error.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace opreg {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kRuntime:
      return "RuntimeError";
    case ErrorKind::kValue:
      return "ValueError";
    case ErrorKind::kType:
      return "TypeError";
    case ErrorKind::kIndex:
      return "IndexError";
    case ErrorKind::kKey:
      return "KeyError";
    case ErrorKind::kNotImplemented:
      return "NotImplementedError";
  }
  return "RuntimeError";
}

Error::Error(ErrorKind kind, std::string message, const char* file, int line)
    : kind_(kind), message_(std::move(message)), file_(file ? file : ""), line_(line) {
  // for callers (Python) that show their own context.
}

std::string ArgErrorMessage(std::string_view op, std::string_view arg, int index,
                            std::string_view expected, std::string_view got) {
  return StrCat("[", op, "] argument '", arg, "' (#", index, "): expected ", expected, ", got ",
                got);
}

namespace {

std::optional<ErrorKind> KindFromPayload(const absl::Status& status) {
  auto payload = status.GetPayload(ToAbsl(kErrorKindPayloadUrl));
  if (!payload) return std::nullopt;
  const std::string name(*payload);
  for (ErrorKind kind : {ErrorKind::kRuntime, ErrorKind::kValue, ErrorKind::kType,
                         ErrorKind::kIndex, ErrorKind::kKey, ErrorKind::kNotImplemented}) {
    if (ErrorKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

ErrorKind KindFromCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return ErrorKind::kValue;
    case absl::StatusCode::kNotFound:
      return ErrorKind::kKey;
    case absl::StatusCode::kUnimplemented:
      return ErrorKind::kNotImplemented;
    case absl::StatusCode::kOutOfRange:
      return ErrorKind::kIndex;
    default:
      return ErrorKind::kRuntime;
  }
}

absl::StatusCode CodeFromKind(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kValue:
    case ErrorKind::kType:
      return absl::StatusCode::kInvalidArgument;
    case ErrorKind::kKey:
      return absl::StatusCode::kNotFound;
    case ErrorKind::kNotImplemented:
      return absl::StatusCode::kUnimplemented;
    case ErrorKind::kIndex:
      return absl::StatusCode::kOutOfRange;
    case ErrorKind::kRuntime:
      break;
  }
  return absl::StatusCode::kInternal;
}

}  // namespace

void ThrowIfError(const absl::Status& status) {
  if (status.ok()) return;
  const ErrorKind kind = KindFromPayload(status).value_or(KindFromCode(status.code()));
  throw Error(kind, std::string(status.message()));
}

absl::Status ToStatus(const Error& error) {
  absl::Status status(CodeFromKind(error.kind()), error.message());
  status.SetPayload(ToAbsl(kErrorKindPayloadUrl), absl::Cord(ToAbsl(ErrorKindName(error.kind()))));
  return status;
}

namespace detail {

void ThrowError(ErrorKind kind, std::string message, const char* file, int line) {
  throw Error(kind, std::move(message), file, line);
}

}  // namespace detail
}  // namespace opreg
