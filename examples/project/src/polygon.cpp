#include "geo/polygon.h"

#include <cmath>
#include <numeric>

namespace geo {
Polygon::Polygon(std::vector<Point> points) : points_(std::move(points)) {}

double Polygon::area() const {
  double twice = 0;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const Point& a = points_[i];
    const Point& b = points_[(i + 1) % points_.size()];
    twice += a.x * b.y - b.x * a.y;
  }
  return std::abs(twice) / 2;
}

double Polygon::perimeter() const {
  double sum = 0;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const Point& a = points_[i];
    const Point& b = points_[(i + 1) % points_.size()];
    sum += std::hypot(b.x - a.x, b.y - a.y);
  }
  return sum;
}

std::string Polygon::name() const {
  return "polygon";
}
}  // namespace geo
