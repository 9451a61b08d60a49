// Errors as values. Failures cross module boundaries as Result<T> = std::expected<T, Error>;
// scheduling outcomes ("does not fit") are not errors. Thread safety: plain values.
#pragma once
#include <expected>
#include <string>

namespace astraeus {

/// A failure a user can read: what went wrong, and where (file, line, field) when known.
struct Error {
    std::string message;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string message) {
    return std::unexpected<Error>(Error{std::move(message)});
}

}  // namespace astraeus
