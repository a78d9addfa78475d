#!/bin/bash
# Micro-benchmark of the T10 PI guard CRC (ISA-L crc16_t10dif, as used by
# protocol/scsi/sbc/pi.c) against memcpy of the same buffer, in one run.
# Prints GB/s and the ratio to memcpy for 512- and 4096-byte blocks.
#
# Usage: scripts/bench-crc16.sh [BUILD_DIR]     (default build/, built if needed)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${SBCEMU_BUILD_DIR:-$repo/build}}
if [ ! -f "$build/CMakeCache.txt" ]; then
	SBCEMU_BUILD_DIR=$build "$repo/scripts/build.sh"
fi
cmake --build "$build" --target bench_crc16 -j "$(nproc)" >/dev/null
for bs in 512 4096; do
	"$build/tests/bench_crc16" "$bs" 2048
done
