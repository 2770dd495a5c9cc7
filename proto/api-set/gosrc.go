// SPDX-License-Identifier: Apache-2.0

// The descriptors in protoc-gen-go's output: each generated .pb.go file
// declares file_<name>_rawDesc, its .proto file's FileDescriptorProto
// in wire form, as a string (concatenated literals, protoc-gen-go
// 1.36 and later) or a []byte literal (earlier). Go's own parser reads
// the literals, so every escape means what the compiler takes it to.

package main

import (
	"archive/zip"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"strconv"
	"strings"
)

// zipDescriptors: the raw descriptors of every generated file in a
// module zip.
func zipDescriptors(path string) ([][]byte, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var out [][]byte
	fset := token.NewFileSet()
	for _, zf := range z.File {
		if !strings.HasSuffix(zf.Name, ".pb.go") {
			continue
		}
		r, err := zf.Open()
		if err != nil {
			return nil, err
		}
		src, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", zf.Name, err)
		}
		f, err := parser.ParseFile(fset, zf.Name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		descs, err := rawDescs(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", zf.Name, err)
		}
		out = append(out, descs...)
	}
	return out, nil
}

func isRawDesc(name string) bool {
	return strings.HasPrefix(name, "file_") && strings.HasSuffix(name, "_rawDesc")
}

func rawDescs(f *ast.File) ([][]byte, error) {
	var out [][]byte
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if !isRawDesc(n.Name) || i >= len(v.Values) {
					continue
				}
				b, err := literalBytes(v.Values[i])
				if err != nil {
					return nil, fmt.Errorf("%s: %v", n.Name, err)
				}
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// literalBytes: the value of "a" + "b" + ... or []byte{0x0a, ...}.
func literalBytes(e ast.Expr) ([]byte, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			break
		}
		s, err := strconv.Unquote(e.Value)
		return []byte(s), err
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			break
		}
		a, err := literalBytes(e.X)
		if err != nil {
			return nil, err
		}
		b, err := literalBytes(e.Y)
		return append(a, b...), err
	case *ast.CompositeLit:
		out := make([]byte, 0, len(e.Elts))
		for _, el := range e.Elts {
			lit, ok := el.(*ast.BasicLit)
			if !ok || lit.Kind != token.INT {
				return nil, fmt.Errorf("a []byte element that is no integer literal")
			}
			v, err := strconv.ParseUint(lit.Value, 0, 8)
			if err != nil {
				return nil, err
			}
			out = append(out, byte(v))
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a string or []byte literal")
}
