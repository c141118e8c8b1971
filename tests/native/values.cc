#include "values.h"

namespace purlin::native_test {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class E>
Table<E> build() {
  Table<E> t;
  for (int i = 0; i < kTableSize; ++i) {
    const std::uint64_t bits = splitmix(static_cast<std::uint64_t>(i) * 131 + sizeof(E));
    E e{};
    if constexpr (std::is_integral_v<E>) {
      if (i % 2 == 0) {
        e = static_cast<E>(static_cast<int>(bits % 127) - 63);  // small, signed values wrap for unsigned
      } else {
        std::memcpy(static_cast<void*>(&e), &bits, sizeof(E));  // any bit pattern
      }
    } else {
      // magnitude (1 + k/8) * {1/2, 1} with a sign: exact in fp8 e4m3, rounded once in e5m2
      const float m = (1.0f + static_cast<float>(bits % 8) / 8.0f) * ((bits >> 3) % 2 ? 0.5f : 1.0f) *
                      ((bits >> 4) % 2 ? -1.0f : 1.0f);
      if constexpr (kNarrowFloat<E>) {
        e = narrow<E>(m);
      } else {
        // Full mantissas for fp32 / fp64, staying below 2 in magnitude.
        const double frac = static_cast<double>(bits >> 11) / static_cast<double>(1ull << 53);
        e = static_cast<E>(static_cast<double>(m) * (1.0 + frac / 16.0));
      }
    }
    t.value[static_cast<std::size_t>(i)] = e;
    t.wide[static_cast<std::size_t>(i)] = widen(e);
  }
  return t;
}

}  // namespace

template <class E>
const Table<E>& table() {
  static const Table<E> t = build<E>();
  return t;
}

std::size_t type_bytes(ncclDataType_t t) {
  std::size_t bytes = 0;
  with_type(t, [&]<class E>() { bytes = sizeof(E); });
  return bytes;
}

const char* type_name(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return "i8";
    case ncclUint8: return "u8";
    case ncclInt32: return "i32";
    case ncclUint32: return "u32";
    case ncclInt64: return "i64";
    case ncclUint64: return "u64";
    case ncclFloat16: return "f16";
    case ncclFloat32: return "f32";
    case ncclFloat64: return "f64";
    case ncclBfloat16: return "bf16";
    case ncclFloat8e4m3: return "e4m3";
    case ncclFloat8e5m2: return "e5m2";
    default: return "unknown";
  }
}

const unsigned char* table_bytes(ncclDataType_t t) {
  const unsigned char* p = nullptr;
  with_type(t, [&]<class E>() { p = reinterpret_cast<const unsigned char*>(table<E>().value.data()); });
  return p;
}

// Every type's table, instantiated here once.
template const Table<std::int8_t>& table();
template const Table<std::uint8_t>& table();
template const Table<std::int32_t>& table();
template const Table<std::uint32_t>& table();
template const Table<std::int64_t>& table();
template const Table<std::uint64_t>& table();
template const Table<__half>& table();
template const Table<float>& table();
template const Table<double>& table();
template const Table<__nv_bfloat16>& table();
template const Table<__nv_fp8_e4m3>& table();
template const Table<__nv_fp8_e5m2>& table();

}  // namespace purlin::native_test
