// SPDX-License-Identifier: Apache-2.0

// The descriptor set: FileDescriptorProtos read just far enough to know
// each one's name and imports, and written imports first, as protoc
// --include_imports does (python's descriptor pool adds them in that
// order).

package main

import (
	"bytes"
	"fmt"
	"sort"
)

type descFile struct {
	name     string
	deps     []string
	raw      []byte
	origin   string
	conflict string // another origin with other bytes for this name
}

// field: the next field of a protobuf message, its number, wire type,
// and for a length-delimited one its body; the rest of the input.
func field(b []byte) (num, wt uint64, body, rest []byte, err error) {
	key, n := varint(b)
	if n == 0 {
		return 0, 0, nil, nil, fmt.Errorf("truncated key")
	}
	b = b[n:]
	num, wt = key>>3, key&7
	switch wt {
	case 0:
		_, n = varint(b)
		if n == 0 {
			break
		}
		return num, wt, nil, b[n:], nil
	case 1:
		if len(b) < 8 {
			break
		}
		return num, wt, nil, b[8:], nil
	case 2:
		l, n := varint(b)
		if n == 0 || uint64(len(b)-n) < l {
			break
		}
		return num, wt, b[n : n+int(l)], b[n+int(l):], nil
	case 5:
		if len(b) < 4 {
			break
		}
		return num, wt, nil, b[4:], nil
	default:
		return 0, 0, nil, nil, fmt.Errorf("wire type %d", wt)
	}
	return 0, 0, nil, nil, fmt.Errorf("truncated field %d", num)
}

func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// parseFile: a FileDescriptorProto's name (field 1) and dependencies
// (field 3).
func parseFile(raw []byte, origin string) (descFile, error) {
	f := descFile{raw: raw, origin: origin}
	for b := raw; len(b) > 0; {
		num, wt, body, rest, err := field(b)
		if err != nil {
			return f, fmt.Errorf("%s: a descriptor that does not parse: %v", origin, err)
		}
		if wt == 2 && num == 1 {
			f.name = string(body)
		} else if wt == 2 && num == 3 {
			f.deps = append(f.deps, string(body))
		}
		b = rest
	}
	if f.name == "" {
		return f, fmt.Errorf("%s: a descriptor without a name", origin)
	}
	return f, nil
}

// addFile: the same file from two origins is fine when the bytes are
// the same; otherwise it is an error, but only if the set needs it
// (modules carry test protos of their own).
func addFile(files map[string]descFile, f descFile) {
	if have, ok := files[f.name]; ok {
		if !bytes.Equal(have.raw, f.raw) && have.conflict == "" {
			have.conflict = f.origin
			files[f.name] = have
		}
		return
	}
	files[f.name] = f
}

// addSet: every file of a FileDescriptorSet (field 1, repeated).
func addSet(files map[string]descFile, set []byte, origin string) error {
	for b := set; len(b) > 0; {
		num, wt, body, rest, err := field(b)
		if err != nil {
			return fmt.Errorf("%s: not a descriptor set: %v", origin, err)
		}
		if wt == 2 && num == 1 {
			f, err := parseFile(body, origin)
			if err != nil {
				return err
			}
			addFile(files, f)
		}
		b = rest
	}
	return nil
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// orderedSet: the roots and everything they import, each after its
// imports, roots in name order; the set's bytes and its file count.
func orderedSet(files map[string]descFile, roots []string) ([]byte, int, error) {
	sort.Strings(roots)
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var out []byte
	n := 0
	var visit func(name, from string) error
	visit = func(name, from string) error {
		switch state[name] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("%s imports itself (through %s)", name, from)
		}
		f, ok := files[name]
		if !ok {
			return fmt.Errorf("%s, which %s imports, is in no module of the lock", name, from)
		}
		if f.conflict != "" {
			return fmt.Errorf("%s differs between %s and %s", name, f.origin, f.conflict)
		}
		state[name] = visiting
		for _, d := range f.deps {
			if err := visit(d, name); err != nil {
				return err
			}
		}
		state[name] = done
		out = append(out, 0x0a)
		out = appendVarint(out, uint64(len(f.raw)))
		out = append(out, f.raw...)
		n++
		return nil
	}
	for _, r := range roots {
		if err := visit(r, "the set"); err != nil {
			return nil, 0, err
		}
	}
	return out, n, nil
}
