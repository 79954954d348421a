// The translation unit that builds the tests' precompiled header (tests/CMakeLists.txt); the
// header is all it has.
