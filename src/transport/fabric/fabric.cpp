// SPDX-License-Identifier: BSD-3-Clause
#include "transport/fabric/fabric.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

namespace optireduce {

std::string fi_error_text(const char *what, int rc) {
    return std::string(what) + ": " + fi_strerror(rc < 0 ? -rc : rc) + " (" + std::to_string(rc) + ")";
}

int open_bound_endpoint(fid_domain *domain, fi_info *info, fid_av *av, fid_cq *cq, FiHandle<fid_ep> &ep,
                        const char **what) {
    int rc;
    if ((rc = fi_endpoint(domain, info, ep.out(), nullptr))) return *what = "fi_endpoint", rc;
    if ((rc = fi_ep_bind(ep.get(), &av->fid, 0))) return *what = "fi_ep_bind(av)", rc;
    if ((rc = fi_ep_bind(ep.get(), &cq->fid, FI_TRANSMIT | FI_RECV))) return *what = "fi_ep_bind(cq)", rc;
    if ((rc = fi_enable(ep.get()))) return *what = "fi_enable", rc;
    return 0;
}

}  // namespace optireduce
