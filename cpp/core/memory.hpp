// Large buffers on transparent huge pages. A buffer of tens of megabytes in 4 KiB pages is paged
// in by thousands of faults, and read at random it misses the TLB on most accesses (BM25's
// per-document norms: 20 MB for 5M documents; SIFT's pyramids).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace mirkit::core {

// Asks the kernel for transparent huge pages over the whole 2 MiB pages inside [p, p + bytes)
// (Linux, blocks of 4 MiB and more; elsewhere nothing). Advice only: with THP off nothing changes.
void advise_huge_pages(void* p, size_t bytes);

// An allocator that advises huge pages for what it allocates and leaves new elements
// uninitialized (the owner writes them all; zero-filling first would page the buffer in with
// small pages before the advice could take effect).
template <class T>
struct HugePageAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = HugePageAllocator<U>;
  };
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    T* p = std::allocator<T>::allocate(n);
    advise_huge_pages(p, n * sizeof(T));
    return p;
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace mirkit::core
