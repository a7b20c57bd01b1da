// The segments argument of the engines over a living index's segments (FieldedEngine,
// ltr::FeatureExtractor): a list of (readers, uint8 deletion flags or None), one per segment.
#pragma once

#include <vector>

#include "bindings/common.hpp"
#include "index/reader.hpp"

namespace mirkit::bindings {

struct SegmentViews {
  std::vector<const index::IndexReader*> readers;
  index::Array<uint8_t> deleted;  // empty: none deleted
};

// The segments of `segments`; the Python objects their views point into are appended to
// `keep`, which must outlive them.
inline std::vector<SegmentViews> segment_views(const py::list& segments, py::list& keep) {
  std::vector<SegmentViews> out;
  for (const py::handle item : segments) {
    const auto t = item.cast<py::tuple>();
    if (t.size() != 2) throw py::value_error("a segment must be (readers, deleted)");
    SegmentViews seg;
    for (const py::handle r : t[0].cast<py::list>()) {
      seg.readers.push_back(&r.cast<const index::IndexReader&>());
    }
    if (!t[1].is_none()) {
      const auto deleted =
          t[1].cast<py::array_t<uint8_t, py::array::c_style | py::array::forcecast>>();
      seg.deleted = {deleted.data(), static_cast<size_t>(deleted.size())};
      keep.append(deleted);
    }
    keep.append(t[0]);
    out.push_back(std::move(seg));
  }
  return out;
}

}  // namespace mirkit::bindings
