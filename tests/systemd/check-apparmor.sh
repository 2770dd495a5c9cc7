#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The package's AppArmor profile, enforced: a container runs on the
# host's kernel, which may have AppArmor off (check-systemd.sh can only
# compile the profile), so this boots the same Debian tree as a VM of
# its own under qemu, with Debian's kernel (linux-image-cloud-amd64,
# AppArmor on by default) and the apparmor package, and runs
# tests/systemd/in-vm.sh in it once the boot is over: the package
# installed, xdsd serving, reloading, keeping its last good state and
# reading its TLS keys in its profile with no denial logged, and a path
# the profile does not allow refused. Each of its checks is a TAP line
# here.
#
# The tree (tree.sh) is copied with hard links, the test's files added,
# and written into an ext4 image with mke2fs -d (no mount, no loop
# device); qemu runs it with -snapshot, so nothing is written back. qemu
# emulates the machine (TCG): /dev/kvm may be there and not run a guest
# (a VM inside a VM), and under emulation the boot takes a minute or two.
# XDSD_QEMU_ACCEL=kvm asks qemu for KVM where it works.
#
# Run by `make check-systemd` as root, with $XDSD_DEB or the build's
# deb/xdsd_*.deb. Nothing is skipped: what cannot run fails.
. "$XDSD_SRCDIR/tests/lib/tap.sh"

srcdir=$XDSD_SRCDIR
accel=${XDSD_QEMU_ACCEL:-tcg}
# the whole VM run, boot to power-off, under emulation on a loaded
# machine; past it the run is cut off and fails
vm_limit=1800
qemu_pid=

bail() {
  fail "$*"
  done_testing
  exit 1
}
trap '[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null; rm -rf "$tap_tmp"' EXIT
trap 'exit 1' INT TERM HUP

[ "$(id -u)" -eq 0 ] || bail "runs as root (debootstrap, the tree's files)"
for tool in qemu-system-x86_64 mke2fs systemd-nspawn debootstrap dpkg-deb openssl; do
  command -v "$tool" > /dev/null 2>&1 ||
    bail "$tool is installed (scripts/install-deps installs it)"
done
deb=${XDSD_DEB:-}
[ -n "$deb" ] || deb=$(ls "$XDSD_BUILDDIR"/deb/xdsd_*_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] && [ -f "$deb" ] || bail "the package is built (make deb): no xdsd_*.deb in $XDSD_BUILDDIR/deb"
echo "# package: $deb"

# Debian's kernel and initramfs (in /boot of the tree), AppArmor's tools
# and policy, e2fsprogs for the root file system's check at boot.
. "$srcdir/tests/systemd/tree.sh"
tree_prepare "$deb" linux-image-cloud-amd64 apparmor e2fsprogs || bail "$tree_error"
kernel=$(ls "$tree"/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
initrd=$(ls "$tree"/boot/initrd.img-* 2>/dev/null | sort -V | tail -n 1)
[ -n "$kernel" ] && [ -n "$initrd" ] || bail "the tree has a kernel and an initramfs in /boot"

# The VM's root: the tree, hard-linked (new files only are added: none
# of the tree's own is written), with the package, certificates, the
# checks and the unit that runs them once booted.
stage=$tap_tmp/root
cp -al "$tree" "$stage" || bail "the tree is copied"
share=$stage/root/xdsd-test
mkdir -p "$share"
cp "$deb" "$share/"
sh "$srcdir/tests/lib/make-certs.sh" "$share/certs" > "$tap_tmp/certs.log" 2>&1 ||
  bail "tests/lib/make-certs.sh makes the certificates"
cp "$srcdir/tests/systemd/in-vm.sh" "$stage/root/in-vm.sh"
cat > "$stage/etc/systemd/system/xdsd-vm-test.service" <<'UNIT'
[Unit]
Description=the checks of check-apparmor.sh
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh /root/in-vm.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
# emulated: as long as the checks take; the host bounds the whole run
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$stage/etc/systemd/system/multi-user.target.wants"
ln -s ../xdsd-vm-test.service "$stage/etc/systemd/system/multi-user.target.wants/xdsd-vm-test.service"
rm -f "$stage/etc/fstab"
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$stage/etc/fstab"

size=$(( $(du -sm "$stage" | cut -f1) + 1024 ))
mke2fs -q -t ext4 -d "$stage" -F "$tap_tmp/root.img" "${size}M" > "$tap_tmp/mke2fs.log" 2>&1 ||
  { sed 's/^/# /' "$tap_tmp/mke2fs.log"; bail "mke2fs -d writes the root image"; }
rm -rf "$stage"

echo "# booting $(basename "$kernel") under qemu ($accel)"
qemu-system-x86_64 -accel "$accel" -m 1536 -smp 2 -nographic -no-reboot -nic none \
  -kernel "$kernel" -initrd "$initrd" \
  -append "root=/dev/vda rw console=ttyS0 apparmor=1 security=apparmor" \
  -drive file="$tap_tmp/root.img",if=virtio,format=raw -snapshot \
  < /dev/null > "$tap_tmp/serial.log" 2>&1 &
qemu_pid=$!
end=$(($(date +%s) + vm_limit))
while kill -0 "$qemu_pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
  sleep 2
done
if kill -0 "$qemu_pid" 2>/dev/null; then
  kill "$qemu_pid"
  echo "# the VM was still running after ${vm_limit}s"
fi
wait "$qemu_pid" 2>/dev/null
qemu_pid=

# The checks' lines, as this test's own.
tr -d '\r' < "$tap_tmp/serial.log" | sed -n 's/^.*XDSD-VM //p' > "$tap_tmp/vm.tap"
while IFS= read -r line; do
  case $line in
    "ok "*) ok "VM: ${line#ok * - }" ;;
    "not ok "*) fail "VM: ${line#not ok * - }" ;;
    "#"*) echo "$line" ;;
  esac
done < "$tap_tmp/vm.tap"
check "the VM booted and ran its checks to the end" grep -qx done "$tap_tmp/vm.tap"
if ! grep -qx done "$tap_tmp/vm.tap" || [ "$tap_failed" -gt 0 ]; then
  echo "# the end of the VM's console:"
  tr -d '\r' < "$tap_tmp/serial.log" | tail -n 40 | sed 's/^/#   /'
fi

done_testing
