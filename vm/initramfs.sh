#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the base initramfs: busybox-static, /init, /etc/passwd and
# /etc/group with nobody.  Cached on the content of this script and the
# busybox package; prints the path of the archive.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need busybox-static cpio gzip
out=$B/initramfs-base.cpio.gz
# Runs started side by side (make check's background stages) wait here
# while one of them builds the archive.
exec 9>"$B/.initramfs.lock"
flock 9
key="$(sha1sum <"$0" | cut -c1-16) $(dpkg-query -W -f='${Version}' busybox-static)"
if [ -f "$out" ] && [ -d "$B/initramfs-root" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	echo "$out"
	exit 0
fi

root=$B/initramfs-root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,mnt}
cp /bin/busybox "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

cat >"$root/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PW
cat >"$root/etc/group" <<'GR'
root:x:0:
nobody:x:65534:
GR

cat >"$root/init" <<'INIT'
#!/bin/sh
# PID 1 of the test VM: mount the usual file systems, run /cmd, print
# the kernel log and the exit status between markers, and reboot (QEMU
# runs with -no-reboot, so that ends the VM; UML passes CMA_HALT=poweroff,
# as a reboot would restart it).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/shm /dev/pts /dev/hugepages
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t hugetlbfs hugetlbfs /dev/hugepages 2>/dev/null
ip link set lo up 2>/dev/null
cd /root
rc=0
if [ -f /cmd ]; then
	/bin/sh /cmd
	rc=$?
fi
[ -e /sys/kernel/debug/kmemleak ] && echo scan >/sys/kernel/debug/kmemleak && \
	cat /sys/kernel/debug/kmemleak
echo CMA-VM-DMESG-BEGIN
dmesg
echo CMA-VM-DMESG-END
echo "CMA-VM-EXIT=$rc"
sync
${CMA_HALT:-reboot} -f
sleep 10
INIT
chmod +x "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -9n) >"$out.tmp"
mv "$out.tmp" "$out"
echo "$key" >"$out.key"
echo "$out"
