// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/carry_store.hpp"

#include "codec/estimators.hpp"
#include "telemetry/stats.hpp"

#include <algorithm>
#include <cmath>

namespace optireduce {

CarryStore::~CarryStore() {
    for (auto &[key, slot] : slots_) drop(slot);
    process_stats().carry_bytes.fetch_sub(bytes_, std::memory_order_relaxed);
}

void CarryStore::drop(Slot &slot) {
    bump(process_stats().carry_dropped_entries, slot.pending);
    slot.pending = 0;
}

CarryStore::Slot &CarryStore::begin(const void *recvbuf, std::size_t count) {
    ++calls_;
    for (auto it = slots_.begin(); it != slots_.end();) {
        if (calls_ - it->second.last_call <= idle_calls_) {
            ++it;
            continue;
        }
        drop(it->second);
        const std::size_t freed = it->second.values.capacity() * sizeof(float);
        bytes_ -= freed;
        process_stats().carry_bytes.fetch_sub(freed, std::memory_order_relaxed);
        it = slots_.erase(it);
    }
    Slot &slot = slots_[{recvbuf, count}];
    slot.last_call = calls_;
    return slot;
}

const float *CarryStore::input(Slot &slot, const float *in, std::size_t count) {
    if (slot.pending == 0) return in;
    float *x = slot.values.data();
    const double res2 = sum_squares(x, count);
    const double cap2 = kMaxResidualRatio * kMaxResidualRatio * sum_squares(in, count);
    if (res2 > cap2) {
        const auto k = static_cast<float>(std::sqrt(cap2 / res2));
        for (std::size_t i = 0; i < count; ++i) x[i] = x[i] * k + in[i];
        bump(process_stats().carry_capped_calls);
    } else {
        for (std::size_t i = 0; i < count; ++i) x[i] += in[i];
    }
    bump(process_stats().entries_carried_in, slot.pending);
    slot.pending = 0;
    return x;
}

bool CarryStore::fit(std::vector<float> &v, std::size_t n) {
    if (v.size() >= n) return true;
    if (n > v.capacity() && bytes_ + (n - v.capacity()) * sizeof(float) > max_bytes_) return false;
    const std::size_t before = v.capacity();
    v.resize(n);
    const std::size_t added = (v.capacity() - before) * sizeof(float);
    bytes_ += added;
    bump(process_stats().carry_bytes, added);
    return true;
}

CarryStore::Target CarryStore::target(Slot &slot, std::size_t count, std::size_t padded, std::uint64_t entries) {
    if (!fit(slot.values, count) || !fit(scratch_, padded)) {
        bump(process_stats().carry_dropped_entries, entries);
        return {};
    }
    slot.pending = entries;
    bump(process_stats().entries_carried, entries);
    return {slot.values.data(), scratch_.data()};
}

}  // namespace optireduce
