#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the project needs, if any is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need git make gcc gcc-12-multilib libc6-dev-i386 libc6-dev-x32 flex bison bc libelf-dev libssl-dev cpio \
	ccache xz-utils perl python3 linux-source-6.12 qemu-system-x86 busybox-static \
	liburing-dev sparse gcc-aarch64-linux-gnu libc6-dev-arm64-cross python3-docutils \
	gnuplot-nox man-db groff-base python3-ply python3-git rsync \
	procps gdb strace openmpi-bin libopenmpi-dev hpcc ucx-utils e2fsprogs \
	linux-perf
