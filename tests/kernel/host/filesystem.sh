# shellcheck shell=bash
# Host side of the "filesystem" check (guest: tests/kernel/guest/filesystem.sh).
# After the daemon has stopped (and flushed), the partition the guest made is
# copied out of the LU's backing file and checked with the host's own
# e2fsprogs: e2fsck -f -n must find it clean, and every file the guest wrote
# must have the checksum the guest computed before unmounting.

host_filesystem() {
	local l backing start size img tmp name want got
	l=$(res filesystem.lun)
	backing=$(backing_file "$l")
	[ -f "$backing" ] || { fail "backing file of LUN $l not found ($backing)"; return; }
	start=$(res filesystem.part_start_sectors)
	size=$(res filesystem.part_size_sectors)
	if [ -z "$start" ] || [ -z "$size" ]; then
		fail "the guest reported no partition"
		return
	fi
	tmp=$(mktemp -d)
	img=$tmp/part.img
	dd if="$backing" of="$img" bs=1M iflag=skip_bytes,count_bytes skip=$((start * 512)) \
		count=$((size * 512)) conv=sparse status=none
	e2fsck -f -n "$img" >"$tmp/fsck.log" 2>&1
	fsck_rc=$?
	fsck_tail=$(tail -n 3 "$tmp/fsck.log" | tr '\n' ' ')
	[ "$fsck_rc" = 0 ]
	expect_true "host e2fsck -f -n of the partition in $backing found problems: $fsck_tail"
	for name in $(printf '%s\n' "${!RES[@]}" | sed -n 's/^filesystem\.sha256\.//p' | sort); do
		want=$(res "filesystem.sha256.$name")
		if debugfs -R "dump /$name $tmp/f" "$img" >/dev/null 2>&1 && [ -f "$tmp/f" ]; then
			got=$(sha256sum <"$tmp/f" | cut -d' ' -f1)
		else
			got="(not found by debugfs)"
		fi
		rm -f "$tmp/f"
		expect "file /$name in the backing file" "$want" "$got"
	done
	rm -rf "$tmp"
}
