// File helpers for on-disk structures: a read-only memory map and a buffered writer that counts
// bytes and computes the CRC-32C of what it writes. Errors name the file (std::runtime_error for
// I/O failures, which are not the caller's fault; std::invalid_argument for bad content).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mirkit::core {

class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);  // throws std::runtime_error naming the path
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return m_data; }
  size_t size() const { return m_size; }
  // Gives the whole pages within [offset, offset + length) back to the page cache (a reader
  // done with them): the mapping stays valid, they are read again if touched.
  void release(size_t offset, size_t length) const;
  const std::string& path() const { return m_path; }

 private:
  const uint8_t* m_data = nullptr;
  size_t m_size = 0;
  std::string m_path;
};

class FileWriter {
 public:
  explicit FileWriter(const std::string& path);  // creates or truncates
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  ~FileWriter();

  void write(const void* data, size_t n);
  template <class T>
  void write_array(const T* values, size_t n) {
    write(values, n * sizeof(T));
  }
  template <class T>
  void put(const T& value) {
    write(&value, sizeof(T));
  }
  // Pushes buffered bytes to the OS (so the file can be read back); keeps the file open.
  void flush();
  // Flushes, fsyncs and closes; throws on failure. Later calls do nothing.
  void close();

  uint64_t bytes() const { return m_bytes; }
  uint32_t crc() const { return m_crc; }
  const std::string& path() const { return m_path; }

 private:
  void flush_buffer();

  std::FILE* m_file = nullptr;
  std::string m_path;
  std::vector<uint8_t> m_buffer;
  size_t m_used = 0;
  uint64_t m_bytes = 0;
  uint32_t m_crc = 0;
};

// Little-endian base-128 varint (the vbyte codec's layout) for in-memory and run-file streams.
inline uint8_t* put_varint(uint8_t* out, uint32_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

inline void append_varint(std::vector<uint8_t>& out, uint32_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

// Reads a varint from [p, end); returns nullptr when it is truncated or longer than 5 bytes.
inline const uint8_t* get_varint(const uint8_t* p, const uint8_t* end, uint32_t& v) {
  uint32_t result = 0;
  for (int shift = 0; shift < 35 && p < end; shift += 7) {
    uint8_t byte = *p++;
    result |= static_cast<uint32_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      v = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace mirkit::core
