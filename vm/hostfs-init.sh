#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vm/run --hostfs: runs inside the VM as its /cmd, from the busybox
# initramfs.  Mounts the host's root (9p, read-only) under a tmpfs overlay,
# mounts proc, sys, dev, dev/pts, dev/shm, tmp and run in it, copies the
# --add folders in, and runs the command (/hostfs-cmd) chrooted there in
# the host's working directory (/hostfs-cwd, else /root).  Its exit status
# is the command's; the initramfs's /init then prints the kernel log and
# the status and ends the VM, as in the initramfs mode.
r=/mnt/root
fail() { echo "hostfs-init: $*" >&2; exit 125; }
mkdir -p /mnt/lower /mnt/rw "$r"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /mnt/lower ||
	fail "cannot mount the host's root (9p tag hostroot)"
mount -t tmpfs -o mode=755 rw /mnt/rw || fail "tmpfs"
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work overlay "$r" ||
	fail "cannot mount the overlay"
mount -t proc proc "$r/proc" || fail "proc"
mount -t sysfs sysfs "$r/sys" || fail "sysfs"
mount -t devtmpfs devtmpfs "$r/dev" || fail "devtmpfs"
mkdir -p "$r/dev/shm" "$r/dev/pts" "$r/run" "$r/tmp" "$r/root"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$r/dev/pts" 2>/dev/null
mount -t tmpfs -o mode=1777 shm "$r/dev/shm" || fail "dev/shm"
mount -t tmpfs -o mode=1777 tmp "$r/tmp" || fail "tmp"
mount -t tmpfs -o mode=755 run "$r/run" || fail "run"
mount -t debugfs debugfs "$r/sys/kernel/debug" 2>/dev/null
# Open MPI and UCX resolve the host name; give the VM its own.
hostname cma-vm
printf '127.0.0.1\tlocalhost cma-vm\n::1\tlocalhost ip6-localhost\n' >"$r/etc/hosts"
echo cma-vm >"$r/etc/hostname"
[ -d /hostfs-add ] && cp -a /hostfs-add/. "$r/"
cp /hostfs-cmd "$r/run/cma-cmd"
cwd=$(cat /hostfs-cwd 2>/dev/null || echo /root)
# shellcheck disable=SC2016 # $1 expands in the chroot's shell
exec chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM=dumb LANG=C.UTF-8 /bin/sh -c 'cd "$1" 2>/dev/null || cd /root; exec /bin/sh /run/cma-cmd' sh "$cwd"
