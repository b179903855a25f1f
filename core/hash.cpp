#include "core/hash.h"

#include <cstdio>

namespace fleetcast {

std::string hash_hex(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string fnv1a64_label(std::uint64_t hash) { return "fnv1a64:" + hash_hex(hash); }

}  // namespace fleetcast
