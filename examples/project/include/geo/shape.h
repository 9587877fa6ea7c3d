#pragma once
#include <memory>
#include <string>

namespace geo {
struct Point {
  double x = 0, y = 0;
};

class Shape {
 public:
  virtual ~Shape() = default;
  virtual double area() const = 0;
  virtual double perimeter() const = 0;
  virtual std::string name() const = 0;
};

using ShapePtr = std::unique_ptr<Shape>;
}  // namespace geo
