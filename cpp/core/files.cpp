#include "core/files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/crc32c.hpp"
#include "core/errors.hpp"

namespace mirkit::core {

namespace {
[[noreturn]] void fail_io(const std::string& what, const std::string& path) {
  throw std::runtime_error(message(what, " ", path, ": ", std::strerror(errno)));
}
constexpr size_t kWriteBuffer = 1 << 20;
}  // namespace

void MappedFile::release(size_t offset, size_t length) const {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t base = reinterpret_cast<uintptr_t>(m_data);
  const uintptr_t lo = (base + offset + page - 1) / page * page;
  const uintptr_t hi = (base + std::min(offset + length, m_size)) / page * page;
  // Advice only: a failure changes nothing the reader sees.
  if (m_data && hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

MappedFile::MappedFile(const std::string& path) : m_path(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_io("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail_io("cannot stat", path);
  }
  m_size = static_cast<size_t>(st.st_size);
  if (m_size > 0) {
    void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      fail_io("cannot map", path);
    }
    m_data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_path(std::move(other.m_path)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (m_data) ::munmap(const_cast<uint8_t*>(m_data), m_size);
    m_data = std::exchange(other.m_data, nullptr);
    m_size = std::exchange(other.m_size, 0);
    m_path = std::move(other.m_path);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (m_data) ::munmap(const_cast<uint8_t*>(m_data), m_size);
}

FileWriter::FileWriter(const std::string& path) : m_path(path), m_buffer(kWriteBuffer) {
  m_file = std::fopen(path.c_str(), "wb");
  if (!m_file) fail_io("cannot create", path);
}

FileWriter::~FileWriter() {
  if (m_file) std::fclose(m_file);  // abandoned (an exception unwound): the caller discards it
}

void FileWriter::flush_buffer() {
  if (m_used == 0) return;
  m_crc = crc32c(m_buffer.data(), m_used, m_crc);
  if (std::fwrite(m_buffer.data(), 1, m_used, m_file) != m_used) fail_io("cannot write", m_path);
  m_used = 0;
}

void FileWriter::write(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  m_bytes += n;
  while (n > 0) {
    if (m_used == m_buffer.size()) flush_buffer();
    size_t take = std::min(n, m_buffer.size() - m_used);
    std::memcpy(m_buffer.data() + m_used, p, take);
    m_used += take;
    p += take;
    n -= take;
  }
}

void FileWriter::flush() {
  flush_buffer();
  if (std::fflush(m_file) != 0) fail_io("cannot write", m_path);
}

void FileWriter::close() {
  if (!m_file) return;
  flush_buffer();
  bool ok = std::fflush(m_file) == 0 && ::fsync(::fileno(m_file)) == 0;
  ok = (std::fclose(m_file) == 0) && ok;
  m_file = nullptr;
  if (!ok) fail_io("cannot close", m_path);
}

}  // namespace mirkit::core
