#include "transport/fabric.hpp"

#include <rdma/fi_errno.h>

namespace optireduce {

std::string fi_error_text(const char *what, int rc) {
    return std::string(what) + ": " + fi_strerror(rc < 0 ? -rc : rc) + " (" + std::to_string(rc) +
           ")";
}

}  // namespace optireduce
