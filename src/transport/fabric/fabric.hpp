// SPDX-License-Identifier: BSD-3-Clause
// RAII ownership of libfabric objects. Every fid the transport opens lives in one of these, so
// an early return during setup or teardown at MPI_Finalize closes exactly what was opened, in
// reverse order of creation (members are destroyed bottom-up).
#pragma once

#include <rdma/fabric.h>

#include <memory>
#include <string>
#include <utility>

namespace optireduce {

// Owns one fid of type T (fid_fabric, fid_domain, fid_ep, fid_av, fid_cq, fid_mr).
template <class T>
class FiHandle {
public:
    FiHandle() = default;
    explicit FiHandle(T *p) : p_(p) {}
    FiHandle(FiHandle &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    FiHandle &operator=(FiHandle &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    FiHandle(const FiHandle &) = delete;
    FiHandle &operator=(const FiHandle &) = delete;
    ~FiHandle() { reset(); }

    T *get() const { return p_; }
    T **out() {
        reset();
        return &p_;
    }
    explicit operator bool() const { return p_ != nullptr; }
    // Returns fi_close's status so callers that care (endpoint shutdown) can log it.
    int reset() {
        int rc = 0;
        if (p_) rc = fi_close(&p_->fid);
        p_ = nullptr;
        return rc;
    }

private:
    T *p_ = nullptr;
};

struct FiInfoDeleter {
    void operator()(fi_info *info) const { fi_freeinfo(info); }
};
using FiInfoPtr = std::unique_ptr<fi_info, FiInfoDeleter>;

// "fi_getinfo: No data available (-61)"-style text for error messages.
std::string fi_error_text(const char *what, int rc);

// Opens `ep` on `domain` for `info`, binds it to `av` and to `cq` for both directions, and enables
// it: the same four steps for every endpoint the transport opens. Returns 0, or the failing
// call's status with its name in *what.
int open_bound_endpoint(fid_domain *domain, fi_info *info, fid_av *av, fid_cq *cq, FiHandle<fid_ep> &ep,
                        const char **what);

}  // namespace optireduce
