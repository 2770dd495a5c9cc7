// SPDX-License-Identifier: Apache-2.0

// The lock and the modules it pins: each is taken from the cache, or
// downloaded there by `go mod download`, and used only when its content
// hashes to the lock's h1: sum (what go.sum holds for it). Where the
// modules are fetched from is the go command's to know (GOPROXY), never
// the lock's.
//
// Cache: $XDSD_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/xdsd; the
// modules are in its gomod/ folder, laid out as Go's module cache.

package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// goCmd: the go command (-go), which downloads the modules.
var goCmd = "go"

type module struct {
	path, version, sum string
}

type lockFile struct {
	envoy   string // the Envoy release whose API the first module is
	modules []module
}

// readLock: `envoy=RELEASE`, then one module a line as go.sum writes
// it (path, version, h1: sum), the Envoy API's first.
func readLock(path string) (*lockFile, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lk := &lockFile{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case strings.HasPrefix(t, "envoy="):
			lk.envoy = strings.TrimPrefix(t, "envoy=")
		default:
			f := strings.Fields(t)
			if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") {
				return nil, fmt.Errorf("%s:%d: expected PATH VERSION h1:SUM", path, line)
			}
			lk.modules = append(lk.modules, module{f[0], f[1], f[2]})
		}
	}
	if lk.envoy == "" || len(lk.modules) == 0 {
		return nil, fmt.Errorf("%s: incomplete (envoy= and at least one module)", path)
	}
	return lk, nil
}

func cacheDir() (string, error) {
	if d := os.Getenv("XDSD_CACHE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "xdsd"), nil
	}
	if d := os.Getenv("HOME"); d != "" {
		return filepath.Join(d, ".cache", "xdsd"), nil
	}
	return "", fmt.Errorf("no cache directory: set XDSD_CACHE_DIR or HOME")
}

// escape: the module cache's spelling of a path or version, where an
// upper-case letter is "!" and the letter in lower case.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hashZip: the h1: sum of a module zip, as the go command computes it
// (golang.org/x/mod/sumdb/dirhash.Hash1): the SHA-256 of the lines
// "<sha256 of the file>  <name>\n", names in byte order.
func hashZip(path string) (string, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return "", err
	}
	defer z.Close()
	files := make(map[string]*zip.File, len(z.File))
	names := make([]string, 0, len(z.File))
	for _, f := range z.File {
		if strings.Contains(f.Name, "\n") {
			return "", fmt.Errorf("%s: a file name holds a newline", path)
		}
		if _, dup := files[f.Name]; dup {
			return "", fmt.Errorf("%s: %s twice", path, f.Name)
		}
		files[f.Name] = f
		names = append(names, f.Name)
	}
	sort.Strings(names)
	sum := sha256.New()
	for _, name := range names {
		r, err := files[name].Open()
		if err != nil {
			return "", err
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %s: %v", path, name, err)
		}
		fmt.Fprintf(sum, "%x  %s\n", h.Sum(nil), name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(sum.Sum(nil)), nil
}

// forget: a module's zip, its hash and its unpacked tree leave the cache.
func forget(modcache, zipPath string, m module) {
	os.Remove(zipPath)
	os.Remove(strings.TrimSuffix(zipPath, ".zip") + ".ziphash")
	os.RemoveAll(filepath.Join(modcache, escape(m.path)+"@"+escape(m.version)))
}

// download runs `go mod download -json PATH@VERSION` in an empty folder
// (no go.mod of the caller's is read), with the lock as the only check
// of the bytes (no checksum database to reach), and returns the zip's
// path.
func download(modcache string, m module) (string, error) {
	if _, err := exec.LookPath(goCmd); err != nil {
		return "", fmt.Errorf("downloading %s@%s needs the go command: install the Debian package golang-go (scripts/install-deps), or configure --with-xds-api=DIR", m.path, m.version)
	}
	dir, err := os.MkdirTemp("", "xdsd-api-set-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(goCmd, "mod", "download", "-json", m.path+"@"+m.version)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOFLAGS=-modcacherw",
		"GOSUMDB=off", "GO111MODULE=on", "GOWORK=off", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, runErr := cmd.Output()
	var res struct{ Zip, Error string }
	if err := json.Unmarshal(outb, &res); err != nil || res.Error != "" || runErr != nil {
		msg := strings.TrimSpace(res.Error + " " + stderr.String())
		if msg == "" && runErr != nil {
			msg = runErr.Error()
		}
		return "", fmt.Errorf("cannot download %s@%s: %s", m.path, m.version, msg)
	}
	return res.Zip, nil
}

// lockedZip: the path of a cached zip of m whose content matches the
// lock, downloading it when the cache has none or a damaged one.
func lockedZip(m module) (string, error) {
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	modcache := filepath.Join(cache, "gomod")
	zipPath := filepath.Join(modcache, "cache", "download", escape(m.path), "@v", escape(m.version)+".zip")
	if _, err := os.Stat(zipPath); err == nil {
		got, err := hashZip(zipPath)
		if err == nil && got == m.sum {
			fmt.Fprintf(os.Stderr, "api-set: using cached %s\n", zipPath)
			return zipPath, nil
		}
		// A damaged or substituted download in the cache is never used.
		fmt.Fprintf(os.Stderr, "api-set: %s: integrity mismatch (want %s, %s): not using it\n",
			zipPath, m.sum, gotText(got, err))
		forget(modcache, zipPath, m)
	}
	fmt.Fprintf(os.Stderr, "api-set: downloading %s@%s\n", m.path, m.version)
	got, err := download(modcache, m)
	if err != nil {
		return "", err
	}
	if got != zipPath {
		return "", fmt.Errorf("go put %s@%s at %s, not %s", m.path, m.version, got, zipPath)
	}
	sum, err := hashZip(zipPath)
	if err != nil || sum != m.sum {
		forget(modcache, zipPath, m)
		return "", fmt.Errorf("%s@%s: integrity mismatch (want %s, %s)", m.path, m.version, m.sum, gotText(sum, err))
	}
	return zipPath, nil
}

// gotText: what a zip hashed to, or why it could not be read.
func gotText(sum string, err error) string {
	if err != nil {
		return "got an unreadable zip: " + err.Error()
	}
	return "got " + sum
}
