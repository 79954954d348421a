// Always-on checks for syncoll's own invariants (LLVM's "asserts for our own bugs", kept on in
// release builds like SimGrid's xbt_assert). Bad *input* never reaches these: readers and
// factories return Diagnostics instead.
#pragma once

namespace syncoll::detail {
[[noreturn]] void invariant_failed(const char *condition, const char *message, const char *file,
                                   int line);
} // namespace syncoll::detail

#define SYNCOLL_INVARIANT(condition, message)                                                      \
  do {                                                                                             \
    if (!(condition))                                                                              \
      ::syncoll::detail::invariant_failed(#condition, message, __FILE__, __LINE__);                \
  } while (false)

#define SYNCOLL_UNREACHABLE(message)                                                               \
  ::syncoll::detail::invariant_failed("unreachable", message, __FILE__, __LINE__)
