#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the project needs, if any is missing: the
# packages of every program the scripts run (vm/tools.list, checked by the
# tools stage of make check), and the libraries, headers, sources and
# Python modules below, which no command names.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2046 # one package a word
need gcc-12-multilib libc6-dev-i386 libc6-dev-x32 libelf-dev libssl-dev perl \
	python3 linux-source-6.12 liburing-dev libc6-dev-arm64-cross python3-docutils \
	python3-ply python3-git groff-base rsync procps libopenmpi-dev \
	$(tool_packages)
