// SPDX-License-Identifier: BSD-3-Clause
#include "transport/fabric/rdm_endpoint.hpp"

#include "telemetry/log.hpp"
#include "telemetry/stats.hpp"
#include "transport/fabric/hints.hpp"
#include "transport/fabric/shm_leftovers.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>

namespace optireduce {
namespace {

constexpr int kCqBatch = 32;
constexpr std::size_t kCqSize = 16384;

}  // namespace

std::unique_ptr<RdmEndpoint> RdmEndpoint::open(const std::string &provider, std::string *error) {
    std::unique_ptr<RdmEndpoint> self(new RdmEndpoint());
    self->provider_ = provider;
    auto fail = [&](const char *what, int rc) {
        *error = "provider '" + provider + "': " + fi_error_text(what, rc);
        return nullptr;
    };

    FiInfoPtr hints = engine_hints(FI_EP_RDM, FI_TAGGED, provider.c_str());
    if (!hints) return fail("fi_allocinfo", -FI_ENOMEM);
    fi_info *info = nullptr;
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &info);
    if (rc != 0 || info == nullptr) return fail("fi_getinfo found no reliable tagged endpoint", rc ? rc : -FI_ENODATA);
    self->info_.reset(info);
    if (std::strcmp(info->fabric_attr->prov_name, "shm") == 0)
        for (const std::string &name : remove_shm_leftovers_of_our_pid())
            OPTIREDUCE_LOG(info, "removed /dev/shm/%s, left by an earlier process with our pid", name.c_str());

    self->max_msg_size_ = info->ep_attr->max_msg_size;
    self->mr_local_ = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;

    if ((rc = fi_fabric(info->fabric_attr, self->fabric_.out(), nullptr))) return fail("fi_fabric", rc);
    if ((rc = fi_domain(self->fabric_.get(), info, self->domain_.out(), nullptr))) return fail("fi_domain", rc);

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_av_open(self->domain_.get(), &av_attr, self->av_.out(), nullptr))) return fail("fi_av_open", rc);

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = kCqSize;
    // Polled with fi_cq_read against our own clock; never fi_cq_sread (shm ignores its timeout).
    cq_attr.wait_obj = FI_WAIT_NONE;
    if ((rc = fi_cq_open(self->domain_.get(), &cq_attr, self->cq_.out(), nullptr))) return fail("fi_cq_open", rc);

    const char *step = nullptr;
    if ((rc = open_bound_endpoint(self->domain_.get(), info, self->av_.get(), self->cq_.get(), self->ep_, &step)))
        return fail(step, rc);

    std::size_t len = kNameSlot;
    if ((rc = fi_getname(&self->ep_.get()->fid, self->name_.data(), &len))) return fail("fi_getname", rc);

    OPTIREDUCE_LOG(info, "opened %s endpoint: fabric %s, domain %s, max_msg_size %zu, mr_local %d",
                   info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name, self->max_msg_size_,
                   self->mr_local_ ? 1 : 0);
    return self;
}

RdmEndpoint::~RdmEndpoint() {
    // Operations are finished before endpoints close (engine teardown order); closing the
    // endpoint releases anything the provider still buffers.
    if (int rc = ep_.reset()) OPTIREDUCE_LOG(debug, "%s", fi_error_text("fi_close(ep)", rc).c_str());
}

bool RdmEndpoint::resolve(std::span<const std::byte> names, int count, std::vector<fi_addr_t> &out,
                          std::string *error) {
    return peers_.resolve(av_.get(), provider_, names, count, out, error);
}

MemoryRegion RdmEndpoint::register_memory(void *buf, std::size_t len, std::string *error) {
    if (!mr_local_ || len == 0) return {};
    FiHandle<fid_mr> mr;
    int rc = fi_mr_reg(domain_.get(), buf, len, FI_SEND | FI_RECV, 0, 0, 0, mr.out(), nullptr);
    if (rc) *error = fi_error_text("fi_mr_reg", rc);
    return MemoryRegion(std::move(mr));
}

int RdmEndpoint::post_send(const void *buf, std::size_t len, void *desc, fi_addr_t dest, std::uint64_t tag,
                           Completion *c) {
    return static_cast<int>(fi_tsend(ep_.get(), buf, len, desc, dest, tag, &c->fi_ctx));
}

int RdmEndpoint::post_recv(void *buf, std::size_t len, void *desc, std::uint64_t tag, Completion *c) {
    return static_cast<int>(fi_trecv(ep_.get(), buf, len, desc, FI_ADDR_UNSPEC, tag, 0, &c->fi_ctx));
}

void RdmEndpoint::cancel(Completion *c) { fi_cancel(&ep_.get()->fid, &c->fi_ctx); }

int RdmEndpoint::progress() {
    int handled = 0;
    fi_cq_tagged_entry entries[kCqBatch];
    for (;;) {
        ssize_t n = fi_cq_read(cq_.get(), entries, kCqBatch);
        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                auto *c = static_cast<Completion *>(entries[i].op_context);
                c->on_done(c, 0);
            }
            handled += static_cast<int>(n);
            if (n < kCqBatch) break;
            continue;
        }
        if (n == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            if (fi_cq_readerr(cq_.get(), &err, 0) == 1) {
                auto *c = static_cast<Completion *>(err.op_context);
                if (err.err != FI_ECANCELED) {  // a withdrawn receive is no error
                    bump(process_stats().completion_errors);
                    OPTIREDUCE_LOG(warn, "%s transfer failed: %s", provider_.c_str(),
                                   fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, nullptr, 0));
                }
                c->on_done(c, err.err ? err.err : FI_EIO);
                ++handled;
                continue;
            }
        }
        break;  // -FI_EAGAIN: empty
    }
    // advance() posts transfers but never adds or removes active operations (their owners do,
    // outside progress), so indexing stays valid.
    for (std::size_t i = 0; i < active_.size(); ++i) active_[i]->advance();
    return handled;
}

void RdmEndpoint::add_active(Progressable *p) { active_.push_back(p); }

void RdmEndpoint::remove_active(Progressable *p) {
    active_.erase(std::remove(active_.begin(), active_.end(), p), active_.end());
}

}  // namespace optireduce
