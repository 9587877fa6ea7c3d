#!/usr/bin/env python3
# Generates a realistic C++ project for benchmarking compile caches: several
# libraries, each with its own include dir (so compiles carry several -I
# dirs), hundreds of TUs mixing standard library and project headers.
"""Usage: gen_project.py OUT_DIR [--tus N] [--libs L] [--headers H] [--seed S]"""

import argparse
import os
import random

STD_HEADERS = [
    "algorithm", "array", "atomic", "chrono", "cstdint", "deque", "functional",
    "iomanip", "iostream", "map", "memory", "mutex", "numeric", "optional",
    "set", "sstream", "string", "string_view", "thread", "tuple", "unordered_map",
    "unordered_set", "utility", "variant", "vector", "list",
]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def header(lib, idx, rng, libs, headers):
    guard = f"GEN_LIB{lib}_H{idx}_H"
    lines = [f"#ifndef {guard}", f"#define {guard}", "#include <vector>"]
    for s in rng.sample(STD_HEADERS, 2):
        lines.append(f"#include <{s}>")
    # Earlier headers of this library and any header of lower libraries.
    for _ in range(rng.randint(1, 3)):
        dep_lib = rng.randint(0, lib)
        limit = idx if dep_lib == lib else headers
        if limit == 0:
            continue
        lines.append(f"#include <lib{dep_lib}/h{rng.randrange(limit)}.h>")
    lines += [
        f"namespace lib{lib} {{",
        f"template <typename T> struct Box{idx} {{",
        "  std::vector<T> items;",
        "  T sum() const { T s{}; for (const T& x : items) s += x; return s; }",
        "};",
        f"inline int h{idx}_value(int x) {{ return x * {rng.randint(2, 97)} + {idx}; }}",
        "}",
        f"#endif  // {guard}",
        "",
    ]
    return "\n".join(lines)


def source(lib, idx, rng, libs, headers):
    lines = ["#include <algorithm>", "#include <string>", "#include <vector>"]
    for s in rng.sample(STD_HEADERS, rng.randint(3, 7)):
        lines.append(f"#include <{s}>")
    used = []
    for _ in range(rng.randint(4, 10)):
        dep_lib = rng.randint(0, lib)
        h = rng.randrange(headers)
        lines.append(f"#include <lib{dep_lib}/h{h}.h>")
        used.append((dep_lib, h))
    lines.append(f"namespace lib{lib} {{")
    body = " + ".join(f"lib{l}::h{h}_value(x)" for l, h in used)
    lines.append(f"int tu{idx}(int x) {{")
    lines.append(f"  lib{used[0][0]}::Box{used[0][1]}<int> b; b.items = {{x, {idx}}};")
    lines.append("  std::vector<std::string> names{\"a\", \"b\"};")
    lines.append("  std::sort(names.begin(), names.end());")
    lines.append(f"  return b.sum() + {body} + int(names.size());")
    lines.append("}")
    lines.append("}")
    lines.append("")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out")
    p.add_argument("--tus", type=int, default=200)
    p.add_argument("--libs", type=int, default=4)
    p.add_argument("--headers", type=int, default=30, help="headers per library")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    cmake = [
        "cmake_minimum_required(VERSION 3.16)",
        "project(generated CXX)",
        "set(CMAKE_CXX_STANDARD 17)",
        "set(CMAKE_CXX_STANDARD_REQUIRED ON)",
    ]
    per_lib = max(1, a.tus // a.libs)
    for lib in range(a.libs):
        for h in range(a.headers):
            write(f"{a.out}/lib{lib}/include/lib{lib}/h{h}.h", header(lib, h, rng, a.libs, a.headers))
        srcs = []
        for t in range(per_lib):
            name = f"lib{lib}/src/tu{t}.cpp"
            write(f"{a.out}/{name}", source(lib, t, rng, a.libs, a.headers))
            srcs.append(name)
        cmake.append(f"add_library(lib{lib} STATIC {' '.join(srcs)})")
        cmake.append(f"target_include_directories(lib{lib} PUBLIC lib{lib}/include)")
        if lib > 0:
            cmake.append(f"target_link_libraries(lib{lib} PUBLIC lib{lib - 1})")
    write(f"{a.out}/main.cpp", "int main() { return 0; }\n")
    cmake.append("add_executable(app main.cpp)")
    cmake.append(f"target_link_libraries(app PRIVATE lib{a.libs - 1})")
    write(f"{a.out}/CMakeLists.txt", "\n".join(cmake) + "\n")
    print(f"generated {per_lib * a.libs} TUs, {a.libs * a.headers} headers in {a.out}")


if __name__ == "__main__":
    main()
