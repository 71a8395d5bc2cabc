#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# /init of capture-fixtures.sh's VM (busybox ash): prints on the serial console what only a
# running kernel has, for the reference-kernel fixtures of tests/data:
#   TPK-KERNEL <uname -r>
#   TPK-BTF-SHA256 <sha256 of /sys/kernel/btf/vmlinux> (the host checks the BTF it took out of
#                  the package's vmlinuz against it)
#   TPK-FORMATS-BEGIN, base64 of a gzip tar of tracefs' events/ (header_* and every
#   SYSTEM/EVENT/format, with their directories, in the kernel's own directory order), TPK-FORMATS-END
#   TPK-DONE <status>
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

/bin/busybox mkdir -p /usr/bin /usr/sbin /proc /sys /dev /tmp
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing
echo 1 > /proc/sys/kernel/printk # no kernel message inside the base64
exec 2>&1

# What cannot go on ends the capture, saying so (the host then writes nothing).
fail() {
	echo "TPK-INFO $*"
	echo "TPK-DONE 1"
	poweroff -f
}

echo "TPK-KERNEL $(uname -r)"
echo "TPK-BTF-SHA256 $(sha256sum < /sys/kernel/btf/vmlinux | cut -d' ' -f1)"
cd /sys/kernel/tracing/events || fail "no tracefs events"
# The names in the order find walks the tree as tar would: each directory before its entries, in
# the kernel's readdir order; only header_* and the format files (no enable, filter, id, trigger).
find . \( -type d -o -name format -o -name 'header_*' \) > /tmp/names
echo "TPK-INFO $(wc -l < /tmp/names) entries"
# tracefs says its files are empty (st_size 0), which tar believes: a copy with the bytes read,
# archived name by name (--no-recursion) from the list, in its order. Numeric owners: the VM has
# no /etc/passwd.
umask 022
mkdir /tmp/events
status=0
while read -r name; do
	if [ -d "$name" ]; then mkdir -p "/tmp/events/$name"; else cat "$name" > "/tmp/events/$name"; fi ||
		status=1
done < /tmp/names
cd /tmp/events || fail "no copy of the events"
# shellcheck disable=SC3040 # busybox ash has it
set -o pipefail
echo TPK-FORMATS-BEGIN
# One word per name (tracefs names have no blanks).
# shellcheck disable=SC2046
tar c --no-recursion --numeric-owner -f - $(cat /tmp/names) | gzip -9 | base64 || status=1
echo TPK-FORMATS-END
echo "TPK-DONE $status"
sync
poweroff -f
