// Sum and product as the GPU computes them: integers wrap modulo 2^bits (signed overflow is
// undefined in C++, so the arithmetic goes through the unsigned type); floating point as is.
// Every host reference reduces with these, so a wrapped integer result is checked exactly.
#pragma once

#include <type_traits>

namespace purlin::test {

template <class A>
A wrapping_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class A>
A wrapping_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

}  // namespace purlin::test
