// The translation unit that builds the test programs' shared precompiled header
// (tests/CMakeLists.txt, UPANTHOR_TEST_PCH); it has no code of its own.
