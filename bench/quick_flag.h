// The one option of the benches that take only --quick (ctest's smoke run): anything else is
// refused with the usage line and exit 2 before any work, so a mistyped flag never runs the
// full bench in place of the one asked for.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace syncoll::bench {

/// Whether --quick was given; prints the usage and exits on --help (0) or on anything else (2).
inline bool quick_flag(int argc, char **argv, const char *bench) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: %s [--quick]\n", bench);
      std::exit(0);
    }
    if (std::strcmp(argv[i], "--quick") != 0) {
      std::fprintf(stderr, "%s: '%s' is not an option; usage: %s [--quick]\n", bench, argv[i],
                   bench);
      std::exit(2);
    }
    quick = true;
  }
  return quick;
}

} // namespace syncoll::bench
