# SPDX-License-Identifier: Apache-2.0
# Benchmarks (bench/README.md), included by Makefile.am. Built by `make`,
# never run by `make check`: bench/run drives them.
#  bench/fleet          N simulated Envoys over ADS (SotW or delta) against
#                       an xDS server: time to a full configuration,
#                       convergence after a snapshot change, server RSS/CPU
#  bench/gen-snapshot   snapshot YAML of a given size, and its small updates
#  bench/run            the standard matrix; writes bench/README.md figures
#  bench/storm          the reconnect storm when a replica dies (fleet --failover)
#  bench/incremental-reload  reloads of a 101-file snapshot, one file changed
#  bench/reload-keys    reloads of 1,000 to 50,000 keys, files and etcd: the
#                       loop's longest turn and the reload's time
#  bench/large          the 50,000-stream rows (fleet --sources)
#  bench/envoy-check    what xdsd --check --envoy costs, a snapshot Envoy
#                       accepts and one with a listener it refuses
#  bench/idle-threads   idle CPU and wake-ups per thread with N fleet streams
#  bench/served-meanwhile  how long a client waits while others are served
#                       something large (a huge name list, unread responses,
#                       a packet of REST-JSON requests)
noinst_PROGRAMS += bench/fleet
bench_fleet_SOURCES = \
	bench/fleet_main.c \
	bench/fleet_measure.c bench/fleet_measure.h \
	bench/fleet.c bench/fleet.h \
	bench/fleet_client.c bench/fleet_client.h \
	bench/fleet_response.c bench/fleet_response.h \
	bench/fleet_envoy.c bench/fleet_envoy.h \
	bench/fleet_resource.c bench/fleet_resource.h \
	bench/fleet_counters.h \
	bench/fleet_pb.c bench/fleet_pb.h bench/fleet_smap.c bench/fleet_smap.h \
	bench/fleet_proc.c bench/fleet_proc.h bench/fleet_util.c bench/fleet_util.h \
	bench/fleet_source.c bench/fleet_source.h
bench_fleet_CFLAGS = $(AM_CFLAGS)
# Of xdsd's libraries the linker takes what the fleet calls: the wire
# format and buffers from the core, the abseil workaround from the
# transport.
bench_fleet_LDADD = src/libxdsd.a src/libxdcore.a $(DEP_LIBS)
EXTRA_DIST += bench/README.md bench/run bench/gen-snapshot bench/idle-cpu bench/storm \
	bench/incremental-reload bench/large bench/idle-threads \
	bench/served-meanwhile bench/reload-keys bench/envoy-check
# bench/loop-stall.so: an LD_PRELOAD library timing each turn of xdsd's
# loop (bench/admin-cost's longest stall).
noinst_PROGRAMS += bench/loop-stall.so
bench_loop_stall_so_SOURCES = bench/loop-stall.c
# (no sanitizers: it is loaded into a process that has none)
bench_loop_stall_so_CFLAGS = -std=gnu11 $(WARN_CFLAGS) $(UV_CFLAGS) -fPIC
bench_loop_stall_so_LDFLAGS = -shared
bench_loop_stall_so_LDADD = $(UV_LIBS) -ldl
