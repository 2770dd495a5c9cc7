// SPDX-License-Identifier: Apache-2.0

// Command gcp-server serves one xdsd snapshot to every client through
// go-control-plane's snapshot cache: Envoy's Go reference server, for the
// side-by-side rows of bench/envoy-fleet (bench/README.md, "A fleet of
// real Envoys").
//
//	gcp-server -listen 127.0.0.1:0 -snapshot FILE.json
//
// FILE.json is an xdsd snapshot as JSON (the sections clusters, endpoints,
// listeners, routes, each a list of resources in the proto3 JSON form of
// Envoy's API); bench/envoy-fleet converts bench/gen-snapshot's YAML to
// it. SIGHUP reads the file again and sets the new snapshot. The server
// prints "listening on ADDR" once it accepts connections, and "reloaded
// in S s" after each SIGHUP, on standard error.
//
// Every node gets the same snapshot (one node hash for all), as xdsd's
// fleet does. Each type has its own version, a hash of its resources, so
// a change resends only the types it touches (a snapshot of one version
// for all types would resend every type on any change). The cache runs
// with ads=false: with ads=true it holds back a response until the
// request names every resource of the type, which a client that asks
// for a subset of names never does.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	// the typed_config of the snapshot's listeners
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachetypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cache "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	server "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// fleetKey is the one node hash: every client shares the snapshot.
const fleetKey = "fleet"

type fleetHash struct{}

func (fleetHash) ID(*core.Node) string { return fleetKey }

// section: where a snapshot section goes in the cache, and the message
// its entries are.
type section struct {
	name string
	typ  cachetypes.ResponseType
	make func() proto.Message
}

var sections = []section{
	{"clusters", cachetypes.Cluster, func() proto.Message { return &cluster.Cluster{} }},
	{"endpoints", cachetypes.Endpoint, func() proto.Message { return &endpoint.ClusterLoadAssignment{} }},
	{"listeners", cachetypes.Listener, func() proto.Message { return &listener.Listener{} }},
	{"routes", cachetypes.Route, func() proto.Message { return &route.RouteConfiguration{} }},
}

// load reads the JSON snapshot into a cache snapshot whose every type's
// version is the hash of that type's resources.
func load(path string) (*cache.Snapshot, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var doc map[string][]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	snap := &cache.Snapshot{}
	count := 0
	det := proto.MarshalOptions{Deterministic: true}
	for _, s := range sections {
		items := make([]cachetypes.Resource, 0, len(doc[s.name]))
		h := sha256.New()
		for i, raw := range doc[s.name] {
			m := s.make()
			if err := protojson.Unmarshal(raw, m); err != nil {
				return nil, 0, fmt.Errorf("%s: %s[%d]: %w", path, s.name, i, err)
			}
			b, err := det.Marshal(m)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %s[%d]: %w", path, s.name, i, err)
			}
			h.Write(b)
			items = append(items, m)
		}
		count += len(items)
		snap.Resources[s.typ] = cache.NewResources(hex.EncodeToString(h.Sum(nil))[:16], items)
	}
	return snap, count, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve xDS on")
	path := flag.String("snapshot", "", "the snapshot, as JSON")
	flag.Parse()
	if *path == "" {
		fmt.Fprintln(os.Stderr, "gcp-server: -snapshot FILE.json is required")
		os.Exit(2)
	}
	ctx := context.Background()
	snapshots := cache.NewSnapshotCache(false, fleetHash{}, nil)
	set := func() error {
		start := time.Now()
		snap, n, err := load(*path)
		if err != nil {
			return err
		}
		if err := snapshots.SetSnapshot(ctx, fleetKey, snap); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "gcp-server: loaded %d resources in %.3f s\n",
			n, time.Since(start).Seconds())
		return nil
	}
	if err := set(); err != nil {
		fmt.Fprintln(os.Stderr, "gcp-server:", err)
		os.Exit(1)
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			start := time.Now()
			if err := set(); err != nil {
				fmt.Fprintln(os.Stderr, "gcp-server: reload failed:", err)
				continue
			}
			fmt.Fprintf(os.Stderr, "gcp-server: reloaded in %.3f s\n", time.Since(start).Seconds())
		}
	}()

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gcp-server:", err)
		os.Exit(1)
	}
	g := grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(g, server.NewServer(ctx, snapshots, server.CallbackFuncs{}))
	fmt.Fprintf(os.Stderr, "gcp-server: listening on %s\n", lis.Addr())
	if err := g.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "gcp-server:", err)
		os.Exit(1)
	}
}
