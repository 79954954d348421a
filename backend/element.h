// The element types and reduction operators the executors run, for the host compiler and for
// nvcc alike: one definition of how a value is combined, so that the CPU executor, the CUDA
// interpreter and the host reference agree bit for bit.
//
// 16-bit floats are held as their bits; arithmetic is done in float and rounded to nearest even
// on the way back, as a GPU's half and bfloat16 reductions round.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define SYNCOLL_HOST_DEVICE __host__ __device__
#include <cuda_fp16.h>
#else
#define SYNCOLL_HOST_DEVICE
#endif

namespace syncoll::backend {

enum class DataType { I32, F32, F16, BF16 };
enum class ReduceOp { Sum, Prod, Max, Min };

namespace element {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

SYNCOLL_HOST_DEVICE inline float from_bits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
SYNCOLL_HOST_DEVICE inline uint32_t to_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}

SYNCOLL_HOST_DEVICE inline float to_float(Half h) {
#if defined(__CUDA_ARCH__)
  // The GPU's own conversion: exact, as the bit-level one below.
  return __half2float(__ushort_as_half(h.bits));
#endif
  const uint32_t sign = uint32_t(h.bits & 0x8000) << 16, exponent = (h.bits >> 10) & 0x1f;
  uint32_t mantissa = h.bits & 0x3ff;
  if (exponent == 0 && mantissa == 0)
    return from_bits(sign);
  if (exponent == 0) { // subnormal: normalize
    uint32_t e = 127 - 15 + 1;
    while (!(mantissa & 0x400))
      mantissa <<= 1, --e;
    return from_bits(sign | (e << 23) | ((mantissa & 0x3ff) << 13));
  }
  if (exponent == 31)
    return from_bits(sign | 0x7f800000 | (mantissa << 13));
  return from_bits(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}
SYNCOLL_HOST_DEVICE inline float to_float(BFloat16 b) {
  return from_bits(uint32_t(b.bits) << 16);
}

// Drops the bits of `value` below `shift`, rounding to nearest, ties to even.
SYNCOLL_HOST_DEVICE inline uint32_t round_shift(uint32_t value, int shift) {
  const uint32_t kept = value >> shift, rest = value & ((1u << shift) - 1),
                 half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}
SYNCOLL_HOST_DEVICE inline Half to_half(float f) {
#if defined(__CUDA_ARCH__)
  // The GPU's own round-to-nearest-even; the bit-level code below rounds the same way.
  return {__half_as_ushort(__float2half_rn(f))};
#endif
  const uint32_t x = to_bits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const int biased = int((x >> 23) & 0xff);
  const uint32_t mantissa = x & 0x7fffff;
  if (biased == 0xff)
    return {uint16_t(sign | 0x7c00 | (mantissa ? 0x200 : 0))};
  const int exponent = biased - 127 + 15;
  if (exponent >= 31)
    return {uint16_t(sign | 0x7c00)};
  if (exponent <= 0) {
    if (exponent < -10)
      return {sign};
    return {uint16_t(sign | round_shift(mantissa | 0x800000, 14 - exponent))};
  }
  // A carry out of the mantissa lands in the exponent, which is the right answer.
  return {uint16_t(sign | round_shift((uint32_t(exponent) << 23) | mantissa, 13))};
}
SYNCOLL_HOST_DEVICE inline BFloat16 to_bfloat16(float f) {
  const uint32_t x = to_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return {uint16_t((x >> 16) | 0x40)}; // a NaN stays one
  return {uint16_t(round_shift(x, 16))};
}

template <class T> SYNCOLL_HOST_DEVICE inline float widen(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return to_float(v);
}
template <class T> SYNCOLL_HOST_DEVICE inline T narrow(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else if constexpr (std::is_same_v<T, Half>)
    return to_half(v);
  else
    return to_bfloat16(v);
}

template <class T> SYNCOLL_HOST_DEVICE inline T max_of(T a, T b) {
  return a < b ? b : a;
}
template <class T> SYNCOLL_HOST_DEVICE inline T min_of(T a, T b) {
  return b < a ? b : a;
}

/// a (op) b in the element type. Integer sums and products wrap (two's complement), so every
/// order of combining gives the same bits.
template <class T> SYNCOLL_HOST_DEVICE inline T combine(ReduceOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
    case ReduceOp::Sum:
      return T(uint32_t(a) + uint32_t(b));
    case ReduceOp::Prod:
      return T(uint32_t(a) * uint32_t(b));
    case ReduceOp::Max:
      return max_of(a, b);
    case ReduceOp::Min:
      return min_of(a, b);
    }
  } else {
    const float x = widen(a), y = widen(b);
    switch (op) {
    case ReduceOp::Sum:
      return narrow<T>(x + y);
    case ReduceOp::Prod:
      return narrow<T>(x * y);
    case ReduceOp::Max:
      return narrow<T>(max_of(x, y));
    case ReduceOp::Min:
      return narrow<T>(min_of(x, y));
    }
  }
  return a; // unreachable: every operator has a case
}

} // namespace element
} // namespace syncoll::backend
