// Errors as values: everything the environment can get wrong (a file, a device, bad input)
// comes back as an Error with a message that says what is wrong and where. Programming errors
// are asserts. Nothing throws across tprop's API, with one kind of exception, named in each
// header it concerns: the in-memory editing and evaluation calls that allocate as they go and
// report nothing else (EntityStore's edits, the CPU reference and the depth sort,
// DclScene::apply, LevelOrder's edits, the CRDT codec's encode and decode) throw std::bad_alloc
// when host memory runs out, leaving their object as it was or whole (EntityStore: every change
// made is reported). Everything that reads input, talks to a device or runs a frame (loading,
// generating, feeding streams, contexts, Propagator) returns that as an Error instead.
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
#include <new>
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

// The error of a path that ran out of host memory: `message`, or where even that cannot be
// allocated "out of memory", which fits the string's own room (no allocation). Never throws.
inline Error out_of_memory_error(const char* message) noexcept {
  try {
    return Error{message};
  } catch (...) {
    return Error{"out of memory"};
  }
}

// f(), a Result, with std::bad_alloc out of it turned into out_of_memory_error(what): for entry
// points whose set-up allocates in many small places (a context, a Propagator).
template <class F>
auto guard_host_memory(const char* what, F&& f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return out_of_memory_error(what);
  }
}

// For operations that produce nothing but can fail.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace tprop
