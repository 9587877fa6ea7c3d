#pragma once
#include <vector>

#include "geo/shape.h"

namespace geo {
class Polygon : public Shape {
 public:
  explicit Polygon(std::vector<Point> points);
  double area() const override;
  double perimeter() const override;
  std::string name() const override;

 private:
  std::vector<Point> points_;
};
}  // namespace geo
