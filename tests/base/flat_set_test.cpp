// FlatSet: the walk's dedupe of answers and candidates, checked against
// std::unordered_set through growth, colliding hashes and aligned pointers.
#include "base/flat_set.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace lexpack::base {
namespace {

TEST(FlatSet, AgreesWithUnorderedSetThroughGrowth) {
  std::vector<std::string> words;
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) words.push_back("/usr/include/x" + std::to_string(rng() % 1500));
  FlatSet<std::string_view> flat(3);
  std::unordered_set<std::string_view> reference;
  for (const std::string& w : words) {
    EXPECT_EQ(flat.insert(w), reference.insert(w).second) << w;
  }
  EXPECT_EQ(flat.size(), reference.size());
}

struct ConstantHash {
  size_t operator()(int) const { return 42; }
};

TEST(FlatSet, EveryValueCollidingStaysDistinct) {
  FlatSet<int, ConstantHash> flat;
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(flat.insert(i)) << i;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(flat.insert(i)) << i;
  EXPECT_EQ(flat.size(), 100u);
}

TEST(FlatSet, AlignedPointers) {
  std::vector<long double> objects(1000);
  FlatSet<const long double*> flat(1000);
  for (const long double& o : objects) EXPECT_TRUE(flat.insert(&o));
  for (const long double& o : objects) EXPECT_FALSE(flat.insert(&o));
  EXPECT_EQ(flat.size(), objects.size());
}

}  // namespace
}  // namespace lexpack::base
