#include "geo/scene.h"

#include <algorithm>
#include <numeric>

namespace geo {
void Scene::add(ShapePtr shape) {
  shapes_.push_back(std::move(shape));
}

double Scene::total_area() const {
  return std::accumulate(shapes_.begin(), shapes_.end(), 0.0,
                         [](double sum, const ShapePtr& s) { return sum + s->area(); });
}

std::map<std::string, int> Scene::count_by_name() const {
  std::map<std::string, int> counts;
  for (const ShapePtr& s : shapes_) ++counts[s->name()];
  return counts;
}

std::vector<double> Scene::areas() const {
  std::vector<double> out(shapes_.size());
  std::transform(shapes_.begin(), shapes_.end(), out.begin(),
                 [](const ShapePtr& s) { return s->area(); });
  return out;
}
}  // namespace geo
