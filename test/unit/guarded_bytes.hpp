// SPDX-License-Identifier: BSD-3-Clause
// A buffer that ends where an unreadable page begins: a kernel that touches one byte past it
// dies with SIGSEGV instead of reading a neighbour's memory unseen. For the wire codecs, whose
// decoders take bytes off the network and whose vector paths must stop exactly at the end.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace optireduce::test {

class GuardedBytes {
public:
    explicit GuardedBytes(std::size_t bytes) : bytes_(bytes) {
        const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const std::size_t data_pages = (bytes + page - 1) / page;
        map_bytes_ = (data_pages + 1) * page;
        void *p = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("GuardedBytes: mmap failed");
        map_ = static_cast<std::byte *>(p);
        if (mprotect(map_ + data_pages * page, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
        data_ = map_ + data_pages * page - bytes;
    }
    ~GuardedBytes() { munmap(map_, map_bytes_); }
    GuardedBytes(const GuardedBytes &) = delete;
    GuardedBytes &operator=(const GuardedBytes &) = delete;

    std::byte *data() { return data_; }
    float *floats() { return reinterpret_cast<float *>(data_); }  // bytes a multiple of 4
    std::size_t size() const { return bytes_; }
    void fill(const void *src) {
        if (bytes_ > 0) std::memcpy(data_, src, bytes_);
    }

private:
    std::byte *map_ = nullptr, *data_ = nullptr;
    std::size_t map_bytes_ = 0, bytes_ = 0;
};

}  // namespace optireduce::test
