// The one translation unit that holds Catch2's main (compiled once, linked into every suite).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
