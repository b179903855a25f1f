// FNV-1a 64: a small, stable hash for identifying data (files, series, runs, random-stream
// purposes). std::hash is not stable across implementations; this is, bit for bit. Not
// cryptographic: it identifies, it does not authenticate.
//
// Thread-safety: Fnv1a64 is a value type owned by one thread; the free functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fleetcast {

class Fnv1a64 {
 public:
  /// Mixes the bytes of `bytes`, in order.
  Fnv1a64& add(std::string_view bytes) noexcept {
    for (const char c : bytes) add_byte(static_cast<unsigned char>(c));
    return *this;
  }
  /// Mixes a 64-bit word as its 8 bytes, least significant first (the same on every platform).
  Fnv1a64& add_word(std::uint64_t word) noexcept {
    for (int byte = 0; byte < 8; ++byte) add_byte(static_cast<unsigned char>((word >> (8 * byte)) & 0xFF));
    return *this;
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return hash_; }

 private:
  void add_byte(unsigned char byte) noexcept {
    hash_ ^= byte;
    hash_ *= 0x100000001B3ULL;  // the FNV 64-bit prime
  }
  std::uint64_t hash_ = 0xCBF29CE484222325ULL;  // the FNV 64-bit offset basis
};

/// The hash as 16 lower-case hex digits.
std::string hash_hex(std::uint64_t hash);

/// "fnv1a64:<16 hex digits>", the labelled form stored in files and databases.
std::string fnv1a64_label(std::uint64_t hash);

}  // namespace fleetcast
