#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# clients/hpcc-in-vm.sh INPUT RUNS NP: hpcc 1.5.0 (the 2010 RFC's
# benchmark) over Open MPI's vader BTL, NP ranks, RUNS times with single
# copy cma and none alternately (cma first, then none, ...), in one boot.
# Prints per run "HPCC mech run key=value ..." with the three figures of
# the RFC's table (GB/s), the ping-pong latency (us) and the run's length
# in seconds of the guest's clock.
set -uo pipefail
input=${1:?usage: hpcc-in-vm.sh INPUT RUNS NP}
runs=${2:-3} np=${3:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=$(mktemp -d /tmp/hpcc.XXXXXX)
cd "$w" || exit 1
cp "$input" hpccinf.txt
rc=0
for r in $(seq 1 "$runs"); do
	for mech in cma none; do
		rm -f hpccoutf.txt
		t0=$(date +%s)
		if ! mpirun --oversubscribe -np "$np" --mca btl self,vader --mca btl_vader_single_copy_mechanism "$mech" \
			hpcc >"out-$mech-$r.txt" 2>&1 || [ ! -s hpccoutf.txt ]; then
			echo "HPCC $mech $r FAILED: $(tail -n 3 "out-$mech-$r.txt" | tr '\n' ' ')"
			rc=1
			continue
		fi
		printf 'HPCC %s %s' "$mech" "$r"
		for k in NaturallyOrderedRingBandwidth_GBytes RandomlyOrderedRingBandwidth_GBytes \
			MaxPingPongBandwidth_GBytes MinPingPongLatency_usec HPL_Tflops; do
			printf ' %s=%s' "$k" "$(sed -n "s/^$k=//p" hpccoutf.txt | head -n 1)"
		done
		printf ' guest_s=%s' $(($(date +%s) - t0))
		printf '\n'
	done
done
exit $rc
