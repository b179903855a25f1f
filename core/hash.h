// FNV-1a 64-bit hashing, for identifying content (training series, plans, batch runs): not for
// security. Fingerprints are written "fnv1a64:<16 lowercase hex digits>".
//
// Thread-safety: value type.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace fleetcast {

class Fnv1a64 {
 public:
  /// Mixes each byte of `bytes`.
  Fnv1a64& bytes(std::string_view bytes) {
    for (unsigned char byte : bytes) {
      hash_ ^= byte;
      hash_ *= kPrime;
    }
    return *this;
  }
  /// Mixes a 64-bit word, least significant byte first (the same on every platform).
  Fnv1a64& word(std::uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      hash_ ^= (word >> (8 * byte)) & 0xFF;
      hash_ *= kPrime;
    }
    return *this;
  }
  Fnv1a64& real(double value) { return word(std::bit_cast<std::uint64_t>(value)); }

  [[nodiscard]] std::uint64_t value() const { return hash_; }
  /// "fnv1a64:<16 hex digits>".
  [[nodiscard]] std::string fingerprint() const;

 private:
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace fleetcast
