// Catch2's main, compiled once for every simulator test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
