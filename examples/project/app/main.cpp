#include <iostream>
#include <memory>

#include "geo/circle.h"
#include "geo/polygon.h"
#include "geo/scene.h"
#include "util/format.h"
#include "util/stats.h"

int main() {
  geo::Scene scene;
  scene.add(std::make_unique<geo::Circle>(geo::Point{0, 0}, 1.0));
  scene.add(std::make_unique<geo::Circle>(geo::Point{2, 2}, 0.5));
  scene.add(
      std::make_unique<geo::Polygon>(std::vector<geo::Point>{{0, 0}, {4, 0}, {4, 3}, {0, 3}}));
  for (const auto& [name, count] : scene.count_by_name())
    std::cout << util::pad_right(name, 10) << count << "\n";
  const util::Summary s = util::summarize(scene.areas());
  std::cout << "total area " << util::fixed(scene.total_area(), 3) << ", median "
            << util::fixed(s.median, 3) << "\n";
  return 0;
}
