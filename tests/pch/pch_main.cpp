// The program that carries a test precompiled header (tests/pch): CMake compiles the header with
// this target's flags, and the test executables reuse it (REUSE_FROM).
int main() { return 0; }
