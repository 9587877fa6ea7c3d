// Test helpers: scan an input with every available kernel, check that all of
// them agree with the scalar reference (also with the input shifted across
// SIMD block boundaries), and render results compactly for assertions; and
// the kernel the product picks, for the tests of the folders above lexer/.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "lexer/kernel.h"
#include "lexer/scanner.h"

namespace lexpack::lexer::testing {

// Scans a heap copy of exactly `src.size()` bytes, so over-reads are visible
// to sanitizers.
inline ScanResult scan_exact(std::string_view src, const Kernel& kernel) {
  std::unique_ptr<char[]> copy(new char[src.size() ? src.size() : 1]);
  if (!src.empty()) std::memcpy(copy.get(), src.data(), src.size());
  return scan(std::string_view(copy.get(), src.size()), kernel);
}

inline std::string render(const ScanResult& r) {
  std::string out;
  for (const Directive& d : r.directives) {
    const std::string text(r.text(d));
    if (!out.empty()) out += " | ";
    out += kind_name(d.kind);
    const bool header =
        d.kind == DirectiveKind::kInclude || d.kind == DirectiveKind::kIncludeNext ||
        d.kind == DirectiveKind::kImport || d.kind == DirectiveKind::kHasInclude ||
        d.kind == DirectiveKind::kHasIncludeNext || d.kind == DirectiveKind::kModuleImport;
    if (d.exported) out += "!";
    if (header && d.angled) {
      out += "<" + text + ">";
    } else if (header && d.computed) {
      out += "(" + text + ")";
    } else if (header && (d.kind != DirectiveKind::kModuleImport || d.header_unit)) {
      out += "\"" + text + "\"";
    } else if (!text.empty()) {
      out += " " + text;
    }
  }
  return out;
}

// Everything but positions, to compare a shifted input with the original.
inline std::string render_all(const ScanResult& r) {
  std::string out = render(r) + " guard=" + r.include_guard;
  out += r.uses_date ? " date" : "";
  out += r.uses_time ? " time" : "";
  out += r.uses_timestamp ? " timestamp" : "";
  for (const Diagnostic& d : r.diagnostics) out += " diag=" + d.message;
  return out;
}

// The scalar result, after checking every kernel against it on `src` and on
// `src` behind a comment line of 1..64 bytes (so candidate bytes land at every
// offset of a 16-, 32- and 64-byte block).
inline ScanResult scan_all(std::string_view src, bool shift = true) {
  const ScanResult ref = scan_exact(src, scalar_kernel());
  for (const Kernel* k : available_kernels()) {
    EXPECT_EQ(scan_exact(src, *k), ref) << "kernel " << k->name << " disagrees on:\n" << src;
  }
  if (shift) {
    const std::string expected = render_all(ref);
    for (int n = 1; n <= 64; ++n) {
      const std::string shifted = "//" + std::string(n, 'x') + "\n" + std::string(src);
      const ScanResult s = scan_exact(shifted, scalar_kernel());
      EXPECT_EQ(render_all(s), expected) << "shift " << n << " on:\n" << src;
      for (const Kernel* k : available_kernels()) {
        EXPECT_EQ(scan_exact(shifted, *k), s) << "kernel " << k->name << " shift " << n;
      }
    }
  }
  return ref;
}

inline std::string scan_render(std::string_view src) {
  return render(scan_all(src));
}

// The kernel the product would pick (lexer::default_kernel); fails the test
// when there is none.
inline const Kernel* kernel() {
  std::string err;
  const Kernel* k = default_kernel(&err);
  EXPECT_NE(k, nullptr) << err;
  return k;
}

}  // namespace lexpack::lexer::testing
