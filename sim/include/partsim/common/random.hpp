// Portable pseudo-random numbers: SplitMix64 and xoshiro256**, written out so that a seed gives the same
// numbers with every compiler and standard library (std:: distributions differ between them).
#pragma once

#include <array>
#include <cstdint>

namespace partsim {

/** SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference code): seeds other generators from one integer. */
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  /** The next 64 random bits. */
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

/** xoshiro256** 1.0 (Blackman and Vigna 2018): the generator of partsim's seeded choices.
 *
 * The four state words come from SplitMix64(seed), as the authors recommend. */
class Xoshiro256StarStar {
 public:
  explicit Xoshiro256StarStar(std::uint64_t seed) {
    SplitMix64 seeder(seed);
    for (std::uint64_t& word : state_) word = seeder.next();
  }
  /** A generator with the given state words (for reference vectors); they must not all be zero. */
  explicit Xoshiro256StarStar(const std::array<std::uint64_t, 4>& state) : state_(state) {}

  /** The next 64 random bits. */
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /** A uniform integer in [0, n), without modulo bias (rejection of the short last interval); n > 0. */
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t threshold = (0 - n) % n; // 2^64 mod n
    for (;;) {
      const std::uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::array<std::uint64_t, 4> state_{};
};

} // namespace partsim
