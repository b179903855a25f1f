#include "core/hash.h"

#include <cstdio>

namespace fleetcast {

std::string Fnv1a64::fingerprint() const {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
  return std::string("fnv1a64:") + text;
}

}  // namespace fleetcast
