// Runs a kernel test once per CPU path this machine has — the engine's kernels at each ISA the CPU
// runs (portable, AVX2, AVX-512) and the library path — as QtTest global data rows.
#pragma once
#include <QtTest>

#include "engine/ops/kernel_choice.h"

namespace gllm::test {

// Call in initTestCase_data(): one row per ISA from `narrowest` up to the CPU's widest with the
// engine's kernels forced, and a "library" row (ATen and the BLAS forced) at the widest ISA.
inline void add_kernel_path_rows(ops::kernels::Isa narrowest = ops::kernels::Isa::Portable) {
  namespace k = ops::kernels;
  QTest::addColumn<int>("kernel_isa");
  QTest::addColumn<int>("kernel_mode");
  for (int isa = static_cast<int>(narrowest); isa <= static_cast<int>(k::cpu_isa()); ++isa)
    QTest::newRow(k::isa_name(static_cast<k::Isa>(isa))) << isa << static_cast<int>(k::Mode::Own);
  QTest::newRow("library") << static_cast<int>(k::cpu_isa()) << static_cast<int>(k::Mode::Library);
}

// Call in init(): runs the test function on its row's path.
inline void enter_kernel_path() {
  namespace k = ops::kernels;
  QFETCH_GLOBAL(int, kernel_isa);
  QFETCH_GLOBAL(int, kernel_mode);
  k::set_isa(static_cast<k::Isa>(kernel_isa));
  k::set_mode(static_cast<k::Mode>(kernel_mode));
}

// Whether the row runs the engine's own kernels (false: the library path).
inline bool kernel_path_is_own() {
  return ops::kernels::mode() == ops::kernels::Mode::Own;
}

}  // namespace gllm::test
