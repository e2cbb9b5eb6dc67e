#pragma once
// Counting a piece of text in another (PTX checks of the codegen tests).
#include <string>

// How many times `what` occurs in `text`.
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// How many of LLVM's inline-asm blocks in PTX `ptx` ("// begin inline asm" to "// end inline asm")
// contain `what`.
inline int inline_asm_blocks_with(const std::string& ptx, const std::string& what) {
  int n = 0;
  for (auto begin = ptx.find("// begin inline asm"); begin != std::string::npos;
       begin = ptx.find("// begin inline asm", begin + 1)) {
    const auto end = ptx.find("// end inline asm", begin);
    if (ptx.substr(begin, end - begin).find(what) != std::string::npos) ++n;
  }
  return n;
}
