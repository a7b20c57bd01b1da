// Binding of the vector kernels (cpp/vectors/) as the _core.vectors submodule. Arrays arrive
// C-contiguous float32 (mirkit.vectors converts once, openly); shapes are checked here with the
// GIL held, the kernels run without it.
#include <string>
#include <utility>
#include <vector>

#include "bindings/common.hpp"
#include "core/cpu_features.hpp"
#include "vectors/distances.hpp"
#include "vectors/fastscan.hpp"
#include "vectors/ivf.hpp"
#include "vectors/hamming.hpp"
#include "vectors/hnsw.hpp"
#include "vectors/kmeans.hpp"
#include "vectors/knn.hpp"
#include "vectors/lsh.hpp"
#include "vectors/lsh_rerank.hpp"
#include "vectors/pq.hpp"

namespace mirkit::bindings {

namespace {

using F32 = py::array_t<float, py::array::c_style>;
using U32 = py::array_t<uint32_t, py::array::c_style>;
using U64 = py::array_t<uint64_t, py::array::c_style>;
using U8 = py::array_t<uint8_t, py::array::c_style>;
using U16 = py::array_t<uint16_t, py::array::c_style>;
using I64 = py::array_t<int64_t, py::array::c_style>;

struct Mat {
  const float* data;
  size_t rows, cols;
};

Mat matrix(const F32& a, const char* name) {
  if (a.ndim() != 2) {
    throw py::value_error(std::string(name) + " must be 2-dimensional, got ndim=" +
                          std::to_string(a.ndim()));
  }
  return {a.data(), static_cast<size_t>(a.shape(0)), static_cast<size_t>(a.shape(1))};
}

void same_dim(const Mat& a, const Mat& b, const char* na, const char* nb) {
  if (a.cols != b.cols) {
    throw py::value_error(std::string(na) + " and " + nb + " must have the same dimension, got " +
                          std::to_string(a.cols) + " and " + std::to_string(b.cols));
  }
}

// Rows x and centers of the same dimension.
std::pair<Mat, Mat> rows_and_centers(const F32& x, const F32& centers) {
  Mat a = matrix(x, "x"), c = matrix(centers, "centers");
  same_dim(a, c, "x", "centers");
  return {a, c};
}

template <class T>
py::array_t<T> to_numpy_2d(std::vector<T>&& v, size_t rows, size_t cols) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)},
                        heap->data(), owner);
}

// LshParams over the arrays of mirkit.vectors.LSHIndex (checked against each other here).
vectors::LshParams lsh_params(int family, const F32& proj, const F32& shift, float width,
                              size_t n_tables) {
  Mat pm = matrix(proj, "proj");
  if (family != 0 && family != 1) throw py::value_error("family must be 0 (sign) or 1 (p-stable)");
  if (n_tables == 0 || pm.rows % n_tables != 0) {
    throw py::value_error("proj rows must be a multiple of n_tables");
  }
  if (shift.ndim() != 1 || static_cast<size_t>(shift.shape(0)) != pm.rows) {
    throw py::value_error("shift must have one entry per row of proj");
  }
  if (family == 1 && !(width > 0.0f)) throw py::value_error("width must be > 0");
  return {vectors::LshFamily(family), n_tables, pm.rows / n_tables, pm.cols, pm.data,
          shift.data(), width};
}

// SignCoder over the projections and thresholds of mirkit.vectors.HammingLSH.
vectors::SignCoder sign_coder(const F32& proj, const F32& threshold) {
  Mat pm = matrix(proj, "proj");
  if (pm.rows == 0 || pm.rows > 4096) throw py::value_error("proj must have 1 to 4096 rows");
  if (threshold.ndim() != 1 || static_cast<size_t>(threshold.shape(0)) != pm.rows) {
    throw py::value_error("threshold must have one entry per row of proj");
  }
  return {pm.rows, pm.cols, pm.data, threshold.data()};
}

// Blocked codes (n_blocks, W, 8) holding n codes.
void check_blocks(const U64& blocks, size_t n, size_t words) {
  if (blocks.ndim() != 3 || static_cast<size_t>(blocks.shape(1)) != words ||
      static_cast<size_t>(blocks.shape(2)) != vectors::kHammingBlock ||
      static_cast<size_t>(blocks.shape(0)) * vectors::kHammingBlock < n) {
    throw py::value_error("blocks must have shape (ceil(n / 8), words, 8)");
  }
}

// PQ sub-centroids (m, ksub, dsub) and codes (n, m) of the same m.
struct PqShape {
  size_t m, ksub, dsub;
};

PqShape pq_shape(const F32& centroids) {
  if (centroids.ndim() != 3 || centroids.shape(0) == 0 || centroids.shape(1) == 0 ||
      centroids.shape(1) > 256 || centroids.shape(2) == 0) {
    throw py::value_error("centroids must have shape (m, ksub, dsub) with 1 <= ksub <= 256");
  }
  return {static_cast<size_t>(centroids.shape(0)), static_cast<size_t>(centroids.shape(1)),
          static_cast<size_t>(centroids.shape(2))};
}

// Codes (n, m); with `check`, every byte is checked < ksub (the kernels index tables with
// them). IVFIndex checks its codes once when it adds or loads them, not at every search.
size_t pq_codes(const U8& codes, size_t m, size_t ksub, bool check = true) {
  if (codes.ndim() != 2 || static_cast<size_t>(codes.shape(1)) != m) {
    throw py::value_error("codes must have shape (n, " + std::to_string(m) + ")");
  }
  const size_t n = codes.shape(0);
  if (check && ksub < 256) {
    const uint8_t* c = codes.data();
    for (size_t i = 0; i < n * m; ++i) {
      if (c[i] >= ksub) {
        throw py::value_error("codes[" + std::to_string(i / m) + ", " + std::to_string(i % m) +
                              "]=" + std::to_string(c[i]) + " is not < ksub=" +
                              std::to_string(ksub));
      }
    }
  }
  return n;
}

}  // namespace

void bind_vectors(py::module_& m) {
  m.def("kernel_level", [] { return core::level_name(vectors::distance_kernel_level()); },
        "Instruction-set level of the blocked distance kernel.");

  m.def(
      "knn",
      [](const F32& queries, const F32& base, size_t k, int metric, unsigned threads) {
        Mat q = matrix(queries, "queries"), b = matrix(base, "base");
        same_dim(q, b, "queries", "base");
        std::vector<float> dist(q.rows * k);
        std::vector<uint32_t> ids(q.rows * k);
        {
          py::gil_scoped_release release;
          vectors::knn(q.data, q.rows, b.data, b.rows, q.cols, k, vectors::Metric(metric),
                       threads, dist.data(), ids.data());
        }
        return py::make_tuple(to_numpy_2d(std::move(dist), q.rows, k),
                              to_numpy_2d(std::move(ids), q.rows, k));
      },
      py::arg("queries").noconvert(), py::arg("base").noconvert(), py::arg("k"),
      py::arg("metric"), py::arg("threads"),
      "(distances, ids), nq x k, best first; metric 0 = squared L2, 1 = inner product.");

  m.def(
      "pairwise_l2",
      [](const F32& x, const F32& base, unsigned threads) {
        auto [a, b] = rows_and_centers(x, base);
        std::vector<float> out(a.rows * b.rows);
        {
          py::gil_scoped_release release;
          vectors::pairwise_l2(a.data, a.rows, b.data, b.rows, a.cols, threads, out.data());
        }
        return to_numpy_2d(std::move(out), a.rows, b.rows);
      },
      py::arg("x").noconvert(), py::arg("centers").noconvert(), py::arg("threads"),
      "Squared L2 distances of every row of x to every center.");

  m.def(
      "assign",
      [](const F32& x, const F32& centers, unsigned threads) {
        auto [a, c] = rows_and_centers(x, centers);
        if (c.rows == 0) throw py::value_error("centers must have at least one row");
        std::vector<uint32_t> labels(a.rows);
        std::vector<float> dist2(a.rows);
        {
          py::gil_scoped_release release;
          vectors::assign(a.data, a.rows, a.cols, c.data, c.rows, threads, labels.data(),
                          dist2.data());
        }
        return py::make_tuple(to_numpy(std::move(labels)), to_numpy(std::move(dist2)));
      },
      py::arg("x").noconvert(), py::arg("centers").noconvert(), py::arg("threads"),
      "(labels, squared distances) of the nearest center of every row (ties: lower id).");

  m.def(
      "lloyd",
      [](const F32& x, F32& centers, uint32_t max_iter, double tol_abs, unsigned threads) {
        auto [a, c] = rows_and_centers(x, centers);
        float* out = centers.mutable_data();
        std::vector<uint32_t> labels(a.rows);
        vectors::LloydResult r;
        {
          py::gil_scoped_release release;
          r = vectors::lloyd(a.data, a.rows, a.cols, c.rows, out, labels.data(), max_iter,
                             tol_abs, threads);
        }
        return py::make_tuple(to_numpy(std::move(labels)), r.n_iter, r.inertia);
      },
      py::arg("x").noconvert(), py::arg("centers").noconvert(), py::arg("max_iter"),
      py::arg("tol_abs"), py::arg("threads"),
      "Lloyd iterations; centers are updated in place. Returns (labels, n_iter, inertia).");

  m.def(
      "kmeans_plus_plus",
      [](const F32& x, size_t k, size_t n_local_trials, uint64_t seed, unsigned threads) {
        Mat a = matrix(x, "x");
        std::vector<float> centers(k * a.cols);
        {
          py::gil_scoped_release release;
          vectors::kmeans_plus_plus(a.data, a.rows, a.cols, k, n_local_trials, seed, threads,
                                    centers.data());
        }
        return to_numpy_2d(std::move(centers), k, a.cols);
      },
      py::arg("x").noconvert(), py::arg("k"), py::arg("n_local_trials"), py::arg("seed"),
      py::arg("threads"), "Greedy k-means++ seeding: k x d centers.");

  m.def(
      "inertia",
      [](const F32& x, const F32& centers, const U32& labels, unsigned threads) {
        auto [a, c] = rows_and_centers(x, centers);
        if (labels.ndim() != 1 || static_cast<size_t>(labels.shape(0)) != a.rows) {
          throw py::value_error("labels must have one entry per row of x");
        }
        for (size_t i = 0; i < a.rows; ++i) {
          if (labels.data()[i] >= c.rows) throw py::value_error("labels out of range");
        }
        py::gil_scoped_release release;
        return vectors::inertia(a.data, a.rows, a.cols, c.data, labels.data(), threads);
      },
      py::arg("x").noconvert(), py::arg("centers").noconvert(), py::arg("labels").noconvert(),
      py::arg("threads"), "Sum of squared distances of the rows to their centers (double).");

  m.def(
      "ratio_match",
      [](const F32& a, const F32& b, float ratio, bool mutual, unsigned threads) {
        Mat ma = matrix(a, "desc_a"), mb = matrix(b, "desc_b");
        same_dim(ma, mb, "desc_a", "desc_b");
        vectors::Matches r;
        {
          py::gil_scoped_release release;
          r = vectors::ratio_match(ma.data, ma.rows, mb.data, mb.rows, ma.cols, ratio, mutual,
                                   threads);
        }
        return py::make_tuple(to_numpy(std::move(r.a)), to_numpy(std::move(r.b)),
                              to_numpy(std::move(r.distance)));
      },
      py::arg("desc_a").noconvert(), py::arg("desc_b").noconvert(), py::arg("ratio"),
      py::arg("mutual"), py::arg("threads"),
      "Lowe ratio-test matches: (rows of a, rows of b, Euclidean distances).");

  m.def("lsh_rerank_level", [] { return core::level_name(vectors::lsh_rerank_level()); },
        "Instruction-set level of LSH re-ranking.");

  m.def(
      "lsh_hash",
      [](int family, const F32& proj, const F32& shift, float width, size_t n_tables,
         const F32& x, unsigned threads) {
        auto p = lsh_params(family, proj, shift, width, n_tables);
        Mat a = matrix(x, "x");
        if (a.cols != p.d) throw py::value_error("x has the wrong dimension");
        std::vector<uint32_t> out(n_tables * a.rows);
        {
          py::gil_scoped_release release;
          vectors::lsh_hash(p, a.data, a.rows, threads, out.data());
        }
        return to_numpy_2d(std::move(out), n_tables, a.rows);
      },
      py::arg("family"), py::arg("proj").noconvert(), py::arg("shift").noconvert(),
      py::arg("width"), py::arg("n_tables"), py::arg("x").noconvert(), py::arg("threads"),
      "32-bit hash of every row in every table, (n_tables, n).");

  m.def(
      "lsh_build",
      [](const U32& hashes, uint32_t slot_bits) {
        if (hashes.ndim() != 2) throw py::value_error("hashes must be 2-dimensional");
        if (slot_bits > 30) throw py::value_error("slot_bits must be <= 30");
        const size_t tables = hashes.shape(0), n = hashes.shape(1);
        const size_t slots = size_t{1} << slot_bits;
        std::vector<uint32_t> offsets(tables * (slots + 1)), ids(tables * n);
        {
          py::gil_scoped_release release;
          vectors::lsh_build(tables, n, hashes.data(), slot_bits, offsets.data(), ids.data());
        }
        return py::make_tuple(to_numpy_2d(std::move(offsets), tables, slots + 1),
                              to_numpy_2d(std::move(ids), tables, n));
      },
      py::arg("hashes").noconvert(), py::arg("slot_bits"),
      "CSR buckets (offsets (L, 2^slot_bits + 1), ids (L, n)) from the hashes.");

  m.def(
      "lsh_search",
      [](int family, const F32& proj, const F32& shift, float width, size_t n_tables,
         uint32_t slot_bits, const U32& offsets, const U32& ids, const F32& data,
         const F32& queries, size_t k, size_t n_probes, size_t n_rerank, bool l2,
         unsigned threads) {
        auto p = lsh_params(family, proj, shift, width, n_tables);
        Mat x = matrix(data, "data"), q = matrix(queries, "queries");
        if (x.cols != p.d || q.cols != p.d) throw py::value_error("wrong dimension");
        const size_t slots = size_t{1} << slot_bits;
        if (slot_bits > 30 || offsets.ndim() != 2 ||
            static_cast<size_t>(offsets.shape(0)) != n_tables ||
            static_cast<size_t>(offsets.shape(1)) != slots + 1 || ids.ndim() != 2 ||
            static_cast<size_t>(ids.shape(0)) != n_tables ||
            static_cast<size_t>(ids.shape(1)) != x.rows) {
          throw py::value_error("bucket arrays do not match the index");
        }
        // Bucket contents are trusted: LSHIndex builds them, and checks them when loading.
        std::vector<float> dist(q.rows * k);
        std::vector<int64_t> out(q.rows * k);
        std::vector<uint32_t> cand(q.rows), scored(q.rows);
        {
          py::gil_scoped_release release;
          vectors::lsh_search(p, slot_bits, offsets.data(), ids.data(), x.data, x.rows, q.data,
                              q.rows, k, n_probes, n_rerank, l2, threads, dist.data(),
                              out.data(), cand.data(), scored.data());
        }
        return py::make_tuple(to_numpy_2d(std::move(dist), q.rows, k),
                              to_numpy_2d(std::move(out), q.rows, k), to_numpy(std::move(cand)),
                              to_numpy(std::move(scored)));
      },
      py::arg("family"), py::arg("proj").noconvert(), py::arg("shift").noconvert(),
      py::arg("width"), py::arg("n_tables"), py::arg("slot_bits"),
      py::arg("offsets").noconvert(), py::arg("ids").noconvert(), py::arg("data").noconvert(),
      py::arg("queries").noconvert(), py::arg("k"), py::arg("n_probes"), py::arg("n_rerank"),
      py::arg("l2"), py::arg("threads"),
      "(distances, ids, candidates found, candidates re-ranked) of a multi-probe LSH search.");

  m.def("hamming_level", [] { return core::level_name(vectors::hamming_level()); },
        "Instruction-set level of the Hamming scan.");

  m.def(
      "sign_encode",
      [](const F32& proj, const F32& threshold, const F32& x, unsigned threads) {
        auto c = sign_coder(proj, threshold);
        Mat a = matrix(x, "x");
        if (a.cols != c.d) throw py::value_error("x has the wrong dimension");
        const size_t words = (c.n_bits + 63) / 64;
        std::vector<uint64_t> out(a.rows * words);
        {
          py::gil_scoped_release release;
          vectors::sign_encode(c, a.data, a.rows, threads, out.data());
        }
        return to_numpy_2d(std::move(out), a.rows, words);
      },
      py::arg("proj").noconvert(), py::arg("threshold").noconvert(), py::arg("x").noconvert(),
      py::arg("threads"),
      "Packed sign codes (n, ceil(n_bits / 64)) uint64, bit j = proj_j . x > t_j.");

  m.def(
      "hamming_distances",
      [](const U64& blocks, size_t n, const U64& qcodes, unsigned threads) {
        if (qcodes.ndim() != 2) throw py::value_error("qcodes must be 2-dimensional");
        const size_t nq = qcodes.shape(0), words = qcodes.shape(1);
        check_blocks(blocks, n, words);
        std::vector<uint16_t> out(nq * n);
        {
          py::gil_scoped_release release;
          vectors::hamming_distances(blocks.data(), n, words, qcodes.data(), nq, threads,
                                     out.data());
        }
        return to_numpy_2d(std::move(out), nq, n);
      },
      py::arg("blocks").noconvert(), py::arg("n"), py::arg("qcodes").noconvert(),
      py::arg("threads"), "Hamming distances (nq, n) uint16 of query codes to blocked codes.");

  m.def(
      "hamming_search",
      [](const F32& proj, const F32& threshold, const U64& blocks, const F32& data,
         const F32& queries, size_t k, size_t n_cand, bool l2, unsigned threads,
         bool want_candidates) {
        auto c = sign_coder(proj, threshold);
        Mat x = matrix(data, "data"), q = matrix(queries, "queries");
        if (x.cols != c.d || q.cols != c.d) throw py::value_error("wrong dimension");
        check_blocks(blocks, x.rows, (c.n_bits + 63) / 64);
        std::vector<float> dist(q.rows * k);
        std::vector<int64_t> ids(q.rows * k), cand(want_candidates ? q.rows * n_cand : 0);
        {
          py::gil_scoped_release release;
          vectors::hamming_search(c, blocks.data(), x.data, x.rows, q.data, q.rows, k, n_cand, l2,
                                  threads, dist.data(), ids.data(),
                                  want_candidates ? cand.data() : nullptr);
        }
        py::object kept = py::none();
        if (want_candidates) kept = to_numpy_2d(std::move(cand), q.rows, n_cand);
        return py::make_tuple(to_numpy_2d(std::move(dist), q.rows, k),
                              to_numpy_2d(std::move(ids), q.rows, k), kept);
      },
      py::arg("proj").noconvert(), py::arg("threshold").noconvert(),
      py::arg("blocks").noconvert(), py::arg("data").noconvert(), py::arg("queries").noconvert(),
      py::arg("k"), py::arg("n_candidates"), py::arg("l2"), py::arg("threads"),
      py::arg("want_candidates"),
      "(distances, ids, candidates or None) of a Hamming-ranking search with exact re-ranking.");
  m.def("adc_level", [] { return core::level_name(vectors::adc_level()); },
        "Instruction-set level of the PQ lookup-accumulate (ADC) kernel.");

  m.def(
      "pq_tables",
      [](const F32& queries, const F32& centroids, bool ip) {
        auto [pm, ksub, dsub] = pq_shape(centroids);
        Mat q = matrix(queries, "queries");
        if (q.cols != pm * dsub) {
          throw py::value_error("queries must have m * dsub = " + std::to_string(pm * dsub) +
                                " columns, got " + std::to_string(q.cols));
        }
        std::vector<float> out(q.rows * pm * ksub);
        {
          py::gil_scoped_release release;
          vectors::pq_tables(q.data, q.rows, centroids.data(), pm, ksub, dsub, ip, out.data());
        }
        return to_numpy_2d(std::move(out), q.rows, pm * ksub);
      },
      py::arg("queries").noconvert(), py::arg("centroids").noconvert(), py::arg("ip"),
      "ADC tables (nq, m * ksub): |q_j - c|^2, or -<q_j, c> with ip.");

  m.def(
      "pq_adc",
      [](const F32& tables, const U8& codes, size_t ksub, unsigned threads) {
        Mat t = matrix(tables, "tables");
        if (ksub == 0 || ksub > 256 || t.cols % ksub != 0) {
          throw py::value_error("tables must have m * ksub columns, 1 <= ksub <= 256");
        }
        const size_t pm = t.cols / ksub, n = pq_codes(codes, pm, ksub);
        std::vector<float> out(t.rows * n);
        {
          py::gil_scoped_release release;
          vectors::pq_adc(t.data, t.rows, pm, ksub, codes.data(), n, threads, out.data());
        }
        return to_numpy_2d(std::move(out), t.rows, n);
      },
      py::arg("tables").noconvert(), py::arg("codes").noconvert(), py::arg("ksub"),
      py::arg("threads"), "ADC distances (nq, n): per query, the sum of its table entries.");

  m.def(
      "ivf_search",
      [](const F32& centroids, const I64& offsets, int kind, const F32& vectors, const U8& codes,
         const F32& sq_lo, const F32& sq_step, const F32& pq_centroids, const F32& pq_term,
         const F32& raw, bool ip,
         const F32& queries, size_t k, size_t n_probe, size_t refine, const U8& allow,
         bool filtered, unsigned threads, const U8& fs_blocks, const I64& fs_offsets,
         bool batched) {
        Mat c = matrix(centroids, "centroids"), q = matrix(queries, "queries");
        same_dim(q, c, "queries", "centroids");
        vectors::IvfData ix;
        ix.d = c.cols;
        ix.n_lists = c.rows;
        ix.ip = ip;
        ix.centroids = c.data;
        if (kind < 0 || kind > 3) {
          throw py::value_error("kind must be 0 (flat), 1 (sq8), 2 (pq) or 3 (pq4)");
        }
        ix.codes_kind = vectors::IvfCodes(kind);
        if (offsets.ndim() != 1 || static_cast<size_t>(offsets.shape(0)) != c.rows + 1) {
          throw py::value_error("offsets must have n_lists + 1 entries");
        }
        const int64_t* off = offsets.data();
        if (off[0] != 0) throw py::value_error("offsets[0] must be 0");
        for (size_t l = 0; l < c.rows; ++l) {
          if (off[l + 1] < off[l]) {
            throw py::value_error("offsets must be non-decreasing; offsets[" +
                                  std::to_string(l + 1) + "] < offsets[" + std::to_string(l) +
                                  "]");
          }
        }
        ix.offsets = off;
        ix.n = static_cast<size_t>(off[c.rows]);
        if (ix.n > 0xFFFFFFFEull) throw py::value_error("an IVF index holds < 2^32 - 1 vectors");
        auto rows_of = [&](size_t rows, size_t cols, size_t want_cols, const char* name) {
          if (rows != ix.n || cols != want_cols) {
            throw py::value_error(std::string(name) + " must have shape (" +
                                  std::to_string(ix.n) + ", " + std::to_string(want_cols) + ")");
          }
        };
        if (ix.codes_kind == vectors::IvfCodes::kFlat) {
          Mat v = matrix(vectors, "vectors");
          rows_of(v.rows, v.cols, ix.d, "vectors");
          ix.vectors = v.data;
        } else if (ix.codes_kind == vectors::IvfCodes::kSq8) {
          if (codes.ndim() != 2) throw py::value_error("codes must be 2-dimensional");
          rows_of(codes.shape(0), codes.shape(1), ix.d, "codes");
          if (sq_lo.ndim() != 1 || static_cast<size_t>(sq_lo.shape(0)) != ix.d ||
              sq_step.ndim() != 1 || static_cast<size_t>(sq_step.shape(0)) != ix.d) {
            throw py::value_error("sq_lo and sq_step must have d entries");
          }
          ix.codes = codes.data();
          ix.sq_lo = sq_lo.data();
          ix.sq_step = sq_step.data();
        } else {
          auto [pm, ksub, dsub] = pq_shape(pq_centroids);
          if (pm * dsub != ix.d) throw py::value_error("pq_centroids do not match d");
          if (pq_codes(codes, pm, ksub, false) != ix.n) {
            throw py::value_error("codes must have n rows");
          }
          ix.codes = codes.data();
          ix.pq_centroids = pq_centroids.data();
          ix.m = pm;
          ix.ksub = ksub;
          if (ix.codes_kind == vectors::IvfCodes::kPq4) {
            if (ksub != 16 || pm > vectors::kFastScanMaxM) {
              throw py::value_error("pq4 needs ksub = 16 and m <= 256");
            }
            if (fs_offsets.ndim() != 1 || static_cast<size_t>(fs_offsets.shape(0)) != c.rows + 1) {
              throw py::value_error("fs_offsets must have n_lists + 1 entries");
            }
            const int64_t* fo = fs_offsets.data();
            for (size_t l = 0; l < c.rows; ++l) {
              const int64_t need = (off[l + 1] - off[l] + 31) / 32;
              if (fo[l] < 0 || fo[l + 1] - fo[l] != need) {
                throw py::value_error("fs_offsets must give every list ceil(size / 32) blocks");
              }
            }
            if (fs_blocks.ndim() != 2 || static_cast<size_t>(fs_blocks.shape(1)) != pm * 16 ||
                fs_blocks.shape(0) != fo[c.rows]) {
              throw py::value_error("fs_blocks must have shape (blocks, m * 16)");
            }
            ix.fs_blocks = fs_blocks.data();
            ix.fs_offsets = fo;
          }
          if (!ip) {
            Mat t = matrix(pq_term, "pq_term");
            if (t.rows != c.rows || t.cols != pm * ksub) {
              throw py::value_error("pq_term must have shape (n_lists, m * ksub)");
            }
            ix.pq_term = t.data;
          }
        }
        if (refine > 0) {
          Mat r = matrix(raw, "raw");
          rows_of(r.rows, r.cols, ix.d, "raw");
          ix.raw = r.data;
        }
        const uint8_t* allowed = nullptr;
        if (filtered) {
          if (allow.ndim() != 1 || static_cast<size_t>(allow.shape(0)) != ix.n) {
            throw py::value_error("allow must have one byte per vector");
          }
          allowed = allow.data();
        }
        if (k == 0) throw py::value_error("k must be >= 1");
        if (batched && (ix.codes_kind != vectors::IvfCodes::kFlat || k != 1 || refine != 0 ||
                        filtered)) {
          throw py::value_error("batched needs flat codes, k = 1, no refine and no filter");
        }
        std::vector<float> dist(q.rows * k);
        std::vector<int64_t> pos(q.rows * k);
        {
          py::gil_scoped_release release;
          if (batched) {
            vectors::ivf_assign(ix, q.data, q.rows, n_probe, threads, dist.data(), pos.data());
          } else {
            vectors::ivf_search(ix, q.data, q.rows, k, n_probe, refine, allowed, threads,
                                dist.data(), pos.data());
          }
        }
        return py::make_tuple(to_numpy_2d(std::move(dist), q.rows, k),
                              to_numpy_2d(std::move(pos), q.rows, k));
      },
      py::arg("centroids").noconvert(), py::arg("offsets").noconvert(), py::arg("kind"),
      py::arg("vectors").noconvert(), py::arg("codes").noconvert(), py::arg("sq_lo").noconvert(),
      py::arg("sq_step").noconvert(), py::arg("pq_centroids").noconvert(),
      py::arg("pq_term").noconvert(), py::arg("raw").noconvert(), py::arg("ip"),
      py::arg("queries").noconvert(), py::arg("k"),
      py::arg("n_probe"), py::arg("refine"), py::arg("allow").noconvert(), py::arg("filtered"),
      py::arg("threads"), py::arg("fs_blocks").noconvert(), py::arg("fs_offsets").noconvert(),
      py::arg("batched") = false,
      "(distances, positions) of an IVF search, nq x k, best first; -1 pads missing hits. "
      "batched (flat codes, k = 1, no refine or filter): the same nearest vectors, the queries "
      "grouped by list and every list scanned once for all of them.");

  m.def("fastscan_level", [] { return core::level_name(vectors::fastscan_level()); },
        "Instruction-set level of the 4-bit PQ fast-scan kernel.");

  m.def(
      "fastscan_accumulate",
      [](const U8& lut, const U8& blocks) {
        // (m, 16): one table, the one-query kernel; (nq, m, 16): the many-query kernel.
        const bool many = lut.ndim() == 3;
        const size_t nq = many ? lut.shape(0) : 1;
        const size_t pm = lut.ndim() >= 2 ? lut.shape(lut.ndim() - 2) : 0;
        if ((lut.ndim() != 2 && !many) || lut.shape(lut.ndim() - 1) != 16 || pm < 1 ||
            pm > vectors::kFastScanMaxM) {
          throw py::value_error(
              "lut must have shape (m, 16) or (nq, m, 16) with 1 <= m <= 256");
        }
        if (blocks.ndim() != 2 || static_cast<size_t>(blocks.shape(1)) != pm * 16) {
          throw py::value_error("blocks must have shape (n_blocks, m * 16) = (n_blocks, " +
                                std::to_string(pm * 16) + ")");
        }
        const size_t nb = blocks.shape(0), per = nb * vectors::kFastScanBlock;
        std::vector<uint16_t> acc(nq * per);
        {
          py::gil_scoped_release release;
          if (many) {
            std::vector<const uint8_t*> luts(nq);
            std::vector<uint16_t*> outs(nq);
            for (size_t g = 0; g < nq; ++g) {
              luts[g] = lut.data() + g * pm * 16;
              outs[g] = acc.data() + g * per;
            }
            vectors::fastscan_many_kernel()(luts.data(), nq, pm, blocks.data(), nb,
                                            outs.data());
          } else {
            vectors::fastscan_kernel()(lut.data(), pm, blocks.data(), nb, acc.data());
          }
        }
        if (!many) return to_numpy_2d(std::move(acc), nb, vectors::kFastScanBlock);
        return to_numpy_2d(std::move(acc), nq, per);
      },
      py::arg("lut").noconvert(), py::arg("blocks").noconvert(),
      "uint16 (n_blocks, 32): per vector of each block, the sum of its lut entries; with nq "
      "tables (nq, m, 16), (nq, n_blocks * 32) from the many-query kernel.");

  m.def(
      "fastscan_below",
      [](const U16& sums, int64_t limit) {
        if (sums.ndim() != 2 || sums.shape(1) != 32) {
          throw py::value_error("sums must have shape (n_blocks, 32)");
        }
        if (limit < 0 || limit > 65535) {
          throw py::value_error("limit must be in [0, 65535], got " + std::to_string(limit));
        }
        const size_t nb = sums.shape(0);
        std::vector<uint32_t> masks(nb);
        const vectors::FastScanBelowKernel below = vectors::fastscan_below_kernel();
        for (size_t b = 0; b < nb; ++b) {
          masks[b] = below(sums.data() + b * 32, static_cast<uint16_t>(limit));
        }
        return to_numpy_2d(std::move(masks), nb, 1);
      },
      py::arg("sums").noconvert(), py::arg("limit"),
      "uint32 (n_blocks, 1): per block, bit i set when sums[block, i] <= limit.");

  m.def(
      "fastscan_quantize",
      [](const F32& table) {
        Mat t = matrix(table, "table");
        if (t.cols != 16 || t.rows < 1 || t.rows > vectors::kFastScanMaxM) {
          throw py::value_error("table must have shape (m, 16) with 1 <= m <= 256");
        }
        std::vector<uint8_t> lut(t.rows * 16);
        const vectors::QuantizedLut q = vectors::quantize_lut(t.data, t.rows, lut.data());
        return py::make_tuple(to_numpy_2d(std::move(lut), t.rows, 16), q.sum_min, q.inv_scale);
      },
      py::arg("table").noconvert(),
      "(uint8 lut (m, 16), sum of the row minima, inverse scale) of a float table.");
  m.def("gather_level", [] { return core::level_name(vectors::gather_level()); },
        "Instruction-set level of the gathered-rows distance kernel (IVF refine, HNSW).");

  using vectors::Hnsw;
  py::class_<Hnsw>(m, "Hnsw", "An HNSW graph over float32 vectors (cpp/vectors/hnsw.hpp).")
      .def(py::init<size_t, size_t, size_t, bool, uint64_t>(), py::arg("d"), py::arg("M"),
           py::arg("ef_construction"), py::arg("ip"), py::arg("seed"))
      .def_property_readonly("size", &Hnsw::size)
      .def_property_readonly("dim", &Hnsw::dim)
      .def_property_readonly("stride", &Hnsw::stride)
      .def_property_readonly("max_level", &Hnsw::max_level)
      .def_property_readonly("entry", [](const Hnsw& h) {
        return h.entry() == Hnsw::kNone ? int64_t{-1} : int64_t{h.entry()};
      })
      .def_property_readonly("n_deleted", &Hnsw::n_deleted)
      .def_property_readonly("upper_words", &Hnsw::upper_words)
      .def(
          "add",
          [](Hnsw& h, const F32& x, unsigned threads) {
            Mat a = matrix(x, "x");
            if (a.cols != h.dim()) {
              throw py::value_error("x must have " + std::to_string(h.dim()) +
                                    " columns, got " + std::to_string(a.cols));
            }
            py::gil_scoped_release release;
            h.add(a.data, a.rows, threads);
          },
          py::arg("x").noconvert(), py::arg("threads"), "Appends the rows of x as new nodes.")
      .def(
          "search",
          [](const Hnsw& h, const F32& queries, size_t k, size_t ef, const U8& allow,
             bool filtered, unsigned threads) {
            Mat q = matrix(queries, "queries");
            if (q.cols != h.dim()) {
              throw py::value_error("queries must have " + std::to_string(h.dim()) +
                                    " columns, got " + std::to_string(q.cols));
            }
            if (k == 0) throw py::value_error("k must be >= 1");
            const uint8_t* allowed = nullptr;
            if (filtered) {
              if (allow.ndim() != 1 || static_cast<size_t>(allow.shape(0)) != h.size()) {
                throw py::value_error("allow must have one byte per node");
              }
              allowed = allow.data();
            }
            std::vector<float> dist(q.rows * k);
            std::vector<int64_t> node(q.rows * k);
            {
              py::gil_scoped_release release;
              h.search(q.data, q.rows, k, ef, allowed, threads, dist.data(), node.data());
            }
            return py::make_tuple(to_numpy_2d(std::move(dist), q.rows, k),
                                  to_numpy_2d(std::move(node), q.rows, k));
          },
          py::arg("queries").noconvert(), py::arg("k"), py::arg("ef"),
          py::arg("allow").noconvert(), py::arg("filtered"), py::arg("threads"),
          "(distances, nodes) nq x k, best first; node -1 pads missing hits.")
      .def(
          "set_deleted",
          [](Hnsw& h, const I64& nodes, bool deleted) {
            if (nodes.ndim() != 1) throw py::value_error("nodes must be 1-dimensional");
            return h.set_deleted(nodes.data(), static_cast<size_t>(nodes.shape(0)), deleted);
          },
          py::arg("nodes").noconvert(), py::arg("deleted"),
          "Marks (or unmarks) nodes deleted; returns how many changed.")
      .def(
          "export_state",
          [](const Hnsw& h) {
            const size_t n = h.size(), words = h.upper_words();
            py::array_t<uint8_t> level0({static_cast<py::ssize_t>(n),
                                         static_cast<py::ssize_t>(h.stride())});
            py::array_t<int32_t> levels(static_cast<py::ssize_t>(n));
            py::array_t<uint8_t> deleted(static_cast<py::ssize_t>(n));
            py::array_t<uint32_t> upper(static_cast<py::ssize_t>(words));
            {
              py::gil_scoped_release release;
              h.export_state(level0.mutable_data(), levels.mutable_data(),
                             deleted.mutable_data(), upper.mutable_data());
            }
            return py::make_tuple(level0, levels, deleted, upper);
          },
          "(level0 (n, stride) uint8, levels int32, deleted uint8, upper uint32).")
      .def(
          "import_state",
          [](Hnsw& h, const U8& level0, const py::array_t<int32_t, py::array::c_style>& levels,
             const U8& deleted, const U32& upper, int64_t entry, bool borrow) {
            if (level0.ndim() != 2 || static_cast<size_t>(level0.shape(1)) != h.stride()) {
              throw py::value_error("level0 must have shape (n, " + std::to_string(h.stride()) +
                                    ")");
            }
            const size_t n = static_cast<size_t>(level0.shape(0));
            if (levels.ndim() != 1 || static_cast<size_t>(levels.shape(0)) != n ||
                deleted.ndim() != 1 || static_cast<size_t>(deleted.shape(0)) != n) {
              throw py::value_error("levels and deleted must have one entry per node");
            }
            if (upper.ndim() != 1) throw py::value_error("upper must be 1-dimensional");
            if (entry < -1 || entry >= static_cast<int64_t>(n)) {
              throw py::value_error("entry " + std::to_string(entry) + " is not a node");
            }
            py::gil_scoped_release release;
            h.import_state(level0.data(), n, levels.data(), deleted.data(), upper.data(),
                           static_cast<size_t>(upper.shape(0)),
                           entry < 0 ? Hnsw::kNone : static_cast<uint32_t>(entry), borrow);
          },
          py::arg("level0").noconvert(), py::arg("levels").noconvert(),
          py::arg("deleted").noconvert(), py::arg("upper").noconvert(), py::arg("entry"),
          py::arg("borrow"), py::keep_alive<1, 2>(),
          "Restores an empty graph from export_state's arrays, checking every link; with "
          "borrow, level0 is used in place (kept alive with the graph) until the next add.");
}

}  // namespace mirkit::bindings
