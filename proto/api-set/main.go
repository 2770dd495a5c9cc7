// SPDX-License-Identifier: Apache-2.0

// api-set writes the Envoy API descriptor set that xdsd loads
// (proto/xds-api.pb), assembled from the Go modules that
// proto/xds-api.lock pins, without protoc.
//
//	api-set [-go GO] -lock proto/xds-api.lock -wkt WKT.pb -o OUT
//
// The modules hold the code protoc-gen-go generated from the Envoy API
// and the APIs it imports; each generated file embeds its .proto file's
// FileDescriptorProto (json_name included, source info stripped), which
// is what a descriptor set is made of. The set holds every envoy/**/v3
// file of the lock's first module and what they import; the well-known
// types (google/protobuf/*) come from WKT.pb, the ones protoc ships,
// the same the transport code and python3-protobuf are built with.
//
// modules.go fetches and checks the modules, gosrc.go reads the
// descriptors out of the generated code, set.go orders and writes them.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "api-set: "+format+"\n", args...)
	os.Exit(1)
}

// isRoot: the files the set is built for, as the protoc build took
// them (every envoy/**/v3 file); the rest come in as their imports.
func isRoot(name string) bool {
	return strings.HasPrefix(name, "envoy/") && strings.Contains(name, "/v3/")
}

func main() {
	lockPath := flag.String("lock", "", "the lock file naming the modules")
	wktPath := flag.String("wkt", "", "descriptor set of the well-known types (protoc)")
	out := flag.String("o", "", "descriptor set to write")
	flag.StringVar(&goCmd, "go", "go", "the go command that downloads modules")
	flag.Parse()
	if *lockPath == "" || *wktPath == "" || *out == "" || flag.NArg() != 0 {
		die("usage: api-set [-go GO] -lock LOCK -wkt WKT.pb -o OUT")
	}

	lock, err := readLock(*lockPath)
	if err != nil {
		die("%v", err)
	}
	files := map[string]descFile{}
	wkt, err := os.ReadFile(*wktPath)
	if err != nil {
		die("%v", err)
	}
	if err := addSet(files, wkt, *wktPath); err != nil {
		die("%v", err)
	}
	var roots []string
	for i, m := range lock.modules {
		zip, err := lockedZip(m)
		if err != nil {
			die("%v", err)
		}
		descs, err := zipDescriptors(zip)
		if err != nil {
			die("%s@%s: %v", m.path, m.version, err)
		}
		for _, raw := range descs {
			f, err := parseFile(raw, m.path+"@"+m.version)
			if err != nil {
				die("%v", err)
			}
			// The well-known types are protoc's, whoever else has a copy.
			if strings.HasPrefix(f.name, "google/protobuf/") {
				continue
			}
			addFile(files, f)
			if i == 0 && isRoot(f.name) {
				roots = append(roots, f.name)
			}
		}
	}
	if len(roots) == 0 {
		die("%s@%s holds no envoy/**/v3 file", lock.modules[0].path, lock.modules[0].version)
	}
	set, n, err := orderedSet(files, roots)
	if err != nil {
		die("%v", err)
	}
	tmp := *out + ".tmp"
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		die("%v", err)
	}
	if err := os.WriteFile(tmp, set, 0o644); err != nil {
		die("%v", err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		die("%v", err)
	}
	fmt.Fprintf(os.Stderr, "api-set: %s: %d files (%d envoy/**/v3), the Envoy %s API\n",
		*out, n, len(roots), lock.envoy)
}
