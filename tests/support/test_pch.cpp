// The unit that compiles the precompiled header of the tests without torch or widgets
// (tests/CMakeLists.txt, gllm_test_pch); it defines nothing.
