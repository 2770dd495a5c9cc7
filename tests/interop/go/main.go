// SPDX-License-Identifier: Apache-2.0

// An xDS client built on grpc-go: the interop tests' Go client
// (tests/interop/README.md). It speaks as tests/interop/client.py does:
// opens a channel to an xds:/// target (the blank import of
// google.golang.org/grpc/xds registers the resolver; the bootstrap file
// comes from GRPC_XDS_BOOTSTRAP or --bootstrap), calls
// /xdsd.test.Echo/Who and writes one JSON line per result on stdout:
//
//	{"event": "start", "client": "go grpc 1.85.0", "target": "..."}
//	{"seq": 1, "ok": true, "who": "A", "ms": 3.1}
//	{"seq": 2, "ok": false, "code": "UNAVAILABLE", "details": "...", "ms": 5003.2}
//	{"event": "done", "rpcs": 2, "failed": 1}
//
// It loops (one RPC, then --interval-ms of rest) until stdin reaches end
// of file or SIGTERM arrives (an RPC then in flight is cancelled and
// not reported), or makes --count RPCs and exits. Exit status 0 once
// stopped as asked, even when RPCs failed: the caller judges them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	_ "google.golang.org/grpc/xds" // registers the xds:/// resolver
)

const method = "/xdsd.test.Echo/Who"

// rawCodec carries the backends' messages as they are: the request is
// empty and the answer is the backend's name, neither a protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "raw" }

func emit(obj map[string]any) {
	line, err := json.Marshal(obj) // sorts the keys
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(append(line, '\n'))
}

func round1(d time.Duration) float64 {
	return float64(d.Microseconds()/100) / 10
}

// codeName spells a status code as client.py does (gRPC's upper-case
// names: UNAVAILABLE, DEADLINE_EXCEEDED).
func codeName(s *status.Status) string {
	var b strings.Builder
	name := s.Code().String()
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

func main() {
	os.Exit(run())
}

func run() int {
	bootstrap := flag.String("bootstrap", "", "sets GRPC_XDS_BOOTSTRAP")
	count := flag.Int("count", 0, "make this many RPCs then exit (0: until stopped)")
	interval := flag.Float64("interval-ms", 20, "rest between RPCs, in ms")
	firstDeadline := flag.Float64("first-deadline", 20, "the first RPC's deadline, in s")
	deadline := flag.Float64("deadline", 5, "later RPCs' deadline, in s")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: client [options] xds:///NAME")
		return 2
	}
	target := flag.Arg(0)
	// grpc-go reads the bootstrap when the first xds channel is made.
	if *bootstrap != "" {
		abs, err := filepath.Abs(*bootstrap)
		if err != nil {
			fmt.Fprintln(os.Stderr, "client:", err)
			return 2
		}
		os.Setenv("GRPC_XDS_BOOTSTRAP", abs)
	}
	if os.Getenv("GRPC_XDS_BOOTSTRAP") == "" {
		fmt.Fprintln(os.Stderr, "client: no bootstrap: pass --bootstrap or set GRPC_XDS_BOOTSTRAP")
		return 2
	}

	// Cancelled when asked to stop: ends the RPC in flight too.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() { <-sigs; stop() }()
	if *count == 0 {
		go func() { io.Copy(io.Discard, os.Stdin); stop() }()
	}

	emit(map[string]any{"event": "start", "client": "go grpc " + grpc.Version, "target": target})
	// Plaintext to the backends; the channel to the xDS server has the
	// credentials the bootstrap's channel_creds name.
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "client: grpc.NewClient:", err)
		return 1
	}
	defer conn.Close()

	seq, failed := 0, 0
	for ctx.Err() == nil && (*count == 0 || seq < *count) {
		seq++
		limit := *deadline
		if seq == 1 {
			limit = *firstDeadline
		}
		callCtx, cancel := context.WithTimeout(ctx, time.Duration(limit*float64(time.Second)))
		t0 := time.Now()
		req, reply := []byte{}, []byte{}
		err := conn.Invoke(callCtx, method, &req, &reply, grpc.ForceCodec(rawCodec{}))
		ms := round1(time.Since(t0))
		cancel()
		if ctx.Err() != nil {
			// Asked to stop mid-RPC: abandoned and not reported.
			seq--
			break
		}
		if err == nil {
			emit(map[string]any{"seq": seq, "ok": true, "who": string(reply), "ms": ms})
		} else {
			failed++
			s := status.Convert(err)
			emit(map[string]any{"seq": seq, "ok": false, "code": codeName(s),
				"details": s.Message(), "ms": ms})
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(*interval * float64(time.Millisecond))):
		}
	}
	emit(map[string]any{"event": "done", "rpcs": seq, "failed": failed})
	return 0
}
