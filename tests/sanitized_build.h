// Heavy tests in the sanitized builds (the `sanitize` and `tsan` presets, where the library runs
// 5 to 20 times slower): they run the same code at a reduced size, their name says so, and they
// check what holds at any size. The accuracy they assert at full size (an LSTM's error, a backtest's
// saving) does not depend on the sanitizers and is checked by the release suite.
#pragma once

#ifdef FLEETCAST_SANITIZED_BUILD
inline constexpr bool kSanitizedBuild = true;
#define FLEETCAST_HEAVY_TEST_NAME(full_name, reduced_name) reduced_name " (reduced size under the sanitizers)"
#else
inline constexpr bool kSanitizedBuild = false;
#define FLEETCAST_HEAVY_TEST_NAME(full_name, reduced_name) full_name
#endif
