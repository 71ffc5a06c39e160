// Errors as values: everything the environment can get wrong (a file, a device, bad input)
// comes back as an Error with a message that says what is wrong and where. Programming errors
// are asserts. Nothing throws across tprop's API.
//
// Reading the value of an error Result (or the error of a good one) is a programming error: it
// stops the program with a message naming the misuse and the error it carried. The check stays
// on in every build, NDEBUG included: unchecked, std::get would throw std::bad_variant_access
// across tprop's API (or, without exceptions, abort with no word of the error), and an
// integrator who forgot one `if (!result)` deserves the message that says what failed. It costs
// one compare of the variant's index.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace tprop {

struct Error {
  std::string message;
};

// Stops the program on a misused Result; `error` is the message of the Result's Error, or
// nullptr when the misuse was asking a good Result for its error.
[[noreturn]] inline void result_misuse(const char* what, const std::string* error) {
  std::fprintf(stderr, "tprop: %s%s%s\n", what, error ? ": the error was: " : "",
               error ? error->c_str() : "");
  std::fflush(stderr);
  std::abort();
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return *checked_value(); }
  const T& value() const& { return *checked_value(); }
  T&& value() && { return std::move(*checked_value()); }
  T* operator->() { return checked_value(); }
  const T* operator->() const { return checked_value(); }
  T& operator*() & { return *checked_value(); }
  const T& operator*() const& { return *checked_value(); }

  const Error& error() const {
    const Error* e = std::get_if<1>(&v_);
    if (!e) result_misuse("Result::error() called on a Result that holds a value", nullptr);
    return *e;
  }

 private:
  // get_if, not get: the misuse path must never throw.
  T* checked_value() {
    if (T* v = std::get_if<0>(&v_)) return v;
    result_misuse("the value of an error Result was used (check `if (!result)` first)",
                  &std::get_if<1>(&v_)->message);
  }
  const T* checked_value() const { return const_cast<Result*>(this)->checked_value(); }

  std::variant<T, Error> v_;
};

// For operations that produce nothing but can fail.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace tprop
