#!/usr/bin/env python3
# A CMake project for the scan benchmark whose TUs reach computed includes:
# Boost headers (BOOST_PP_ITERATE, the MPL's preprocessed headers), a
# `#define CFG <cfg.h>` + `#include CFG` per library, and an #include_next
# wrapper of a standard header. Deterministic for a given seed.
# usage: gen_boost_project.py OUT_DIR [--tus N] [--seed S]
import argparse
import os
import random

BOOST = [
    "boost/mpl/vector.hpp", "boost/mpl/map.hpp", "boost/mpl/bind.hpp",
    "boost/mpl/transform.hpp", "boost/variant.hpp", "boost/lexical_cast.hpp",
    "boost/function.hpp", "boost/optional.hpp", "boost/tuple/tuple.hpp",
    "boost/fusion/include/vector.hpp", "boost/type_traits.hpp",
    "boost/preprocessor/repetition/enum_params.hpp", "boost/smart_ptr/shared_ptr.hpp",
    "boost/algorithm/string/trim.hpp", "boost/range/algorithm/sort.hpp",
]
STD = ["vector", "string", "map", "memory", "algorithm", "cstdio", "stdio.h"]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--tus", type=int, default=40)
    p.add_argument("--seed", type=int, default=16)
    a = p.parse_args()
    rng = random.Random(a.seed)
    libs = 4
    cmake = ["cmake_minimum_required(VERSION 3.16)", "project(boostgen CXX)",
             "set(CMAKE_CXX_STANDARD 17)"]
    for lib in range(libs):
        d = "lib%d" % lib
        write("%s/%s/cfg/cfg_%d.h" % (a.out, d, lib), "#pragma once\nint cfg_%d();\n" % lib)
        write("%s/%s/cfg/cfg_unused.h" % (a.out, d), "#error never read\n")
        write("%s/%s/include/%s/api.h" % (a.out, d, d),
              "#pragma once\n#ifndef LIB_CFG\n#define LIB_CFG <cfg_%d.h>\n#endif\n"
              "#include LIB_CFG\n#define LIB_STR(x) #x\n#define LIB_XSTR(x) LIB_STR(x)\n"
              "#include LIB_XSTR(%s/detail.h)\n#if 0\n#include <cfg_unused.h>\n#endif\n"
              % (lib, d))
        write("%s/%s/include/%s/detail.h" % (a.out, d, d), "#pragma once\n#include <string>\n")
        srcs = []
        for t in range(a.tus // libs):
            name = "%s/src/t%d.cc" % (d, t)
            includes = rng.sample(BOOST, 3) + rng.sample(STD, 2)
            text = "".join("#include <%s>\n" % h for h in includes)
            text += "#include <%s/api.h>\n" % d
            text += "#ifdef USE_WRAPPED\n#include <wrapped_only.h>\n#endif\n"
            text += "int f%d_%d() { return cfg_%d(); }\n" % (lib, t, lib)
            write("%s/%s" % (a.out, name), text)
            srcs.append(name)
        cmake.append("add_library(%s STATIC %s)" % (d, " ".join(srcs)))
        cmake.append("target_include_directories(%s PRIVATE wrap %s/include %s/cfg)" % (d, d, d))
    write("%s/wrap/stdio.h" % a.out,
          "#pragma once\n#include_next <stdio.h>\n#define WRAPPED_STDIO 1\n")
    write("%s/wrap/wrapped_only.h" % a.out, "#error never read\n")
    write("%s/CMakeLists.txt" % a.out, "\n".join(cmake) + "\n")


if __name__ == "__main__":
    main()
