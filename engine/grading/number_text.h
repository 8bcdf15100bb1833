// Number formatting for the grading module's error messages: ten significant digits, so a
// refused value reads back exactly as the user gave it.
#pragma once
#include <sstream>
#include <string>

namespace gllm::grading {

inline std::string number_text(double x) {
  std::ostringstream os;
  os.precision(10);
  os << x;
  return os.str();
}

}  // namespace gllm::grading
