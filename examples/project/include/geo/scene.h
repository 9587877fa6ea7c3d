#pragma once
#include <map>
#include <string>
#include <vector>

#include "geo/shape.h"

namespace geo {
class Scene {
 public:
  void add(ShapePtr shape);
  double total_area() const;
  std::map<std::string, int> count_by_name() const;
  std::vector<double> areas() const;

 private:
  std::vector<ShapePtr> shapes_;
};
}  // namespace geo
