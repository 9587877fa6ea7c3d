#include "geo/circle.h"

#include <cmath>
#include <numbers>

namespace geo {
Circle::Circle(Point center, double radius) : center_(center), radius_(radius) {}
double Circle::area() const {
  return std::numbers::pi * radius_ * radius_;
}
double Circle::perimeter() const {
  return 2 * std::numbers::pi * radius_;
}
std::string Circle::name() const {
  return "circle";
}
}  // namespace geo
