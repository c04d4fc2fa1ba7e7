// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// multimem instructions (NVLink SHARP): accesses through a multicast address reach the same offset
// of every GPU's buffer bound to the multicast object. ld_reduce loads from all of them and returns
// the sum; st stores to all of them; red adds into all of them. All are relaxed, system scope.
//
// Each struct is one instruction; the template arguments select the PTX element type (a tag below)
// and the number of 32-bit registers moved (1, 2 or 4: the scalar, .v2 and .v4 forms; the vector
// forms exist for f32, f16x2 and bf16x2 only, as in PTX).
//
// MSCCLPP_ARCH_MULTIMEM: defined for sm_90 and newer. Elsewhere the functions still compile but trap
// with a message when called, since the instructions do not exist there.

#ifndef MSCCLPP_ARCH_MULTIMEM_SM90_HPP_
#define MSCCLPP_ARCH_MULTIMEM_SM90_HPP_

#include <cstdint>

#include "../assert_device.hpp"
#include "../device.hpp"

#if defined(MSCCLPP_DEVICE_CUDA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define MSCCLPP_ARCH_MULTIMEM 1
#endif

#if defined(MSCCLPP_DEVICE_CUDA)

namespace mscclpp {
namespace arch {

/// PTX element types of the multimem instructions.
struct PtxS32 {};
struct PtxU32 {};
struct PtxF32 {};
struct PtxF16x2 {};
struct PtxBF16x2 {};
struct PtxF64 {};

template <typename PtxType, int NumRegs>
struct MultimemLdReduceAdd;  // static void load(uint32_t* regs, const void* mcPtr)
template <typename PtxType, int NumRegs>
struct MultimemSt;  // static void store(void* mcPtr, const uint32_t* regs)
template <typename PtxType, int NumRegs>
struct MultimemRedAdd;  // static void reduce(void* mcPtr, const uint32_t* regs)

namespace detail {
__device__ __noinline__ inline void multimemUnsupported() {
  printf("mscclpp: multimem instructions need sm_90 or newer [block (%u,%u,%u) thread (%u,%u,%u)]\n", blockIdx.x,
         blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
  MSCCLPP_DEVICE_TRAP();
}
}  // namespace detail

#if defined(MSCCLPP_ARCH_MULTIMEM)
#define MSCCLPP_ARCH_MULTIMEM_BODY(...) asm volatile(__VA_ARGS__)
#else
#define MSCCLPP_ARCH_MULTIMEM_BODY(...) detail::multimemUnsupported()
#endif

// Stamps out the scalar forms of the three instructions for one PTX element type.
#define MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS(Tag, ptx)                                                                 \
  template <>                                                                                                        \
  struct MultimemLdReduceAdd<Tag, 1> {                                                                               \
    MSCCLPP_DEVICE_INLINE static void load(uint32_t* r, const void* p) {                                             \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.ld_reduce.relaxed.sys.global.add." ptx " %0, [%1];"                       \
                                 : "=r"(r[0])                                                                        \
                                 : "l"(p)                                                                            \
                                 : "memory");                                                                        \
    }                                                                                                                \
  };                                                                                                                 \
  template <>                                                                                                        \
  struct MultimemSt<Tag, 1> {                                                                                        \
    MSCCLPP_DEVICE_INLINE static void store(void* p, const uint32_t* r) {                                            \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.st.relaxed.sys.global." ptx " [%0], %1;" ::"l"(p), "r"(r[0]) : "memory"); \
    }                                                                                                                \
  };                                                                                                                 \
  template <>                                                                                                        \
  struct MultimemRedAdd<Tag, 1> {                                                                                    \
    MSCCLPP_DEVICE_INLINE static void reduce(void* p, const uint32_t* r) {                                           \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.red.relaxed.sys.global.add." ptx " [%0], %1;" ::"l"(p), "r"(r[0])         \
                                 : "memory");                                                                        \
    }                                                                                                                \
  };

// Stamps out the .v2 and .v4 forms, which PTX offers for floating-point element types only.
#define MSCCLPP_ARCH_MULTIMEM_VECTOR_FORMS(Tag, ptx)                                                                   \
  template <>                                                                                                          \
  struct MultimemLdReduceAdd<Tag, 2> {                                                                                 \
    MSCCLPP_DEVICE_INLINE static void load(uint32_t* r, const void* p) {                                               \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.ld_reduce.relaxed.sys.global.add.v2." ptx " {%0,%1}, [%2];"                 \
                                 : "=r"(r[0]), "=r"(r[1])                                                              \
                                 : "l"(p)                                                                              \
                                 : "memory");                                                                          \
    }                                                                                                                  \
  };                                                                                                                   \
  template <>                                                                                                          \
  struct MultimemLdReduceAdd<Tag, 4> {                                                                                 \
    MSCCLPP_DEVICE_INLINE static void load(uint32_t* r, const void* p) {                                               \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.ld_reduce.relaxed.sys.global.add.v4." ptx " {%0,%1,%2,%3}, [%4];"           \
                                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                                      \
                                 : "l"(p)                                                                              \
                                 : "memory");                                                                          \
    }                                                                                                                  \
  };                                                                                                                   \
  template <>                                                                                                          \
  struct MultimemSt<Tag, 2> {                                                                                          \
    MSCCLPP_DEVICE_INLINE static void store(void* p, const uint32_t* r) {                                              \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.st.relaxed.sys.global.v2." ptx " [%0], {%1,%2};" ::"l"(p), "r"(r[0]),       \
                                 "r"(r[1])                                                                             \
                                 : "memory");                                                                          \
    }                                                                                                                  \
  };                                                                                                                   \
  template <>                                                                                                          \
  struct MultimemSt<Tag, 4> {                                                                                          \
    MSCCLPP_DEVICE_INLINE static void store(void* p, const uint32_t* r) {                                              \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.st.relaxed.sys.global.v4." ptx " [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(r[0]), \
                                 "r"(r[1]), "r"(r[2]), "r"(r[3])                                                       \
                                 : "memory");                                                                          \
    }                                                                                                                  \
  };                                                                                                                   \
  template <>                                                                                                          \
  struct MultimemRedAdd<Tag, 2> {                                                                                      \
    MSCCLPP_DEVICE_INLINE static void reduce(void* p, const uint32_t* r) {                                             \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.red.relaxed.sys.global.add.v2." ptx " [%0], {%1,%2};" ::"l"(p), "r"(r[0]),  \
                                 "r"(r[1])                                                                             \
                                 : "memory");                                                                          \
    }                                                                                                                  \
  };                                                                                                                   \
  template <>                                                                                                          \
  struct MultimemRedAdd<Tag, 4> {                                                                                      \
    MSCCLPP_DEVICE_INLINE static void reduce(void* p, const uint32_t* r) {                                             \
      MSCCLPP_ARCH_MULTIMEM_BODY("multimem.red.relaxed.sys.global.add.v4." ptx " [%0], {%1,%2,%3,%4};" ::"l"(p),       \
                                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])                                            \
                                 : "memory");                                                                          \
    }                                                                                                                  \
  };

MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS(PtxS32, "s32")
MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS(PtxU32, "u32")
MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS(PtxF32, "f32")
MSCCLPP_ARCH_MULTIMEM_VECTOR_FORMS(PtxF32, "f32")
MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS(PtxF16x2, "f16x2")
MSCCLPP_ARCH_MULTIMEM_VECTOR_FORMS(PtxF16x2, "f16x2")
MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS(PtxBF16x2, "bf16x2")
MSCCLPP_ARCH_MULTIMEM_VECTOR_FORMS(PtxBF16x2, "bf16x2")

#undef MSCCLPP_ARCH_MULTIMEM_SCALAR_FORMS
#undef MSCCLPP_ARCH_MULTIMEM_VECTOR_FORMS

/// multimem.st.relaxed.sys.global.f64: one double, passed as its two 32-bit halves (low first).
template <>
struct MultimemSt<PtxF64, 2> {
  MSCCLPP_DEVICE_INLINE static void store(void* p, const uint32_t* r) {
    const double value = __hiloint2double(static_cast<int>(r[1]), static_cast<int>(r[0]));
    MSCCLPP_ARCH_MULTIMEM_BODY("multimem.st.relaxed.sys.global.f64 [%0], %1;" ::"l"(p), "d"(value) : "memory");
  }
};

#undef MSCCLPP_ARCH_MULTIMEM_BODY

}  // namespace arch
}  // namespace mscclpp

#endif  // defined(MSCCLPP_DEVICE_CUDA)

#endif  // MSCCLPP_ARCH_MULTIMEM_SM90_HPP_
