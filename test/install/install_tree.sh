#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fixture: installs the build tree into a fresh prefix, as a user would with --prefix.
set -euo pipefail
build=$1 prefix=$2
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix"
