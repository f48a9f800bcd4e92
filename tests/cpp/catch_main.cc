// The one translation unit that instantiates Catch2's runner; every test binary links it.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
