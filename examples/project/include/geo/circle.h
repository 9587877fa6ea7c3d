#pragma once
#include "geo/shape.h"

namespace geo {
class Circle : public Shape {
 public:
  Circle(Point center, double radius);
  double area() const override;
  double perimeter() const override;
  std::string name() const override;

 private:
  Point center_;
  double radius_;
};
}  // namespace geo
