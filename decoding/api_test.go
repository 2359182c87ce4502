package decoding

import (
	"bytes"
	"compress/gzip"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/boundhttp/boundhttp/limits"
)

// TestNoPoolPlumbingInPublicAPI: an exported ReleaseChunks once pooled
// any slice with a power-of-two capacity between 512 B and 64 KiB, so the
// next decoded body aliased the caller's buffer. Pool plumbing is not
// public: no exported name of the package mentions chunks or release, and
// no exported signature uses the internal chunk package.
func TestNoPoolPlumbingInPublicAPI(t *testing.T) {
	t.Parallel()
	for name, f := range sourceFiles(t) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			lower := strings.ToLower(fd.Name.Name)
			if strings.Contains(lower, "chunk") || strings.Contains(lower, "release") || strings.Contains(lower, "pool") {
				t.Errorf("%s: exported %s is pool plumbing", name, fd.Name.Name)
			}
			var sig strings.Builder
			ast.Inspect(fd.Type, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok {
						sig.WriteString(x.Name + ".")
					}
				}
				return true
			})
			if strings.Contains(sig.String(), "chunk.") {
				t.Errorf("%s: exported %s has the internal chunk package in its signature", name, fd.Name.Name)
			}
		}
	}
	rt := reflect.TypeFor[*Reader]()
	for i := range rt.NumMethod() {
		if m := rt.Method(i).Name; strings.Contains(strings.ToLower(m), "chunk") {
			t.Errorf("(*Reader).%s is pool plumbing", m)
		}
	}
}

// TestReturnedBodyNeverAliasesALaterBody: a body ReadAll returned belongs
// to the caller; no later body is decoded into its memory.
func TestReturnedBodyNeverAliasesALaterBody(t *testing.T) {
	t.Parallel()
	var kept [][]byte
	var want [][]byte
	for i, n := range []int{100, 600, 4096, 5000, 70000, 300} {
		data := bytes.Repeat([]byte{byte('a' + i)}, n)
		got, err := ReadAll(bytes.NewReader(gzipped(t, data)), "gzip", limits.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, got)
		want = append(want, data)
	}
	// Many more bodies through the same pools.
	for i := range 200 {
		data := bytes.Repeat([]byte{'Z'}, 100+i*97%9000)
		if _, err := ReadAll(bytes.NewReader(data), "", limits.Budget{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range kept {
		if !bytes.Equal(kept[i], want[i]) {
			t.Errorf("body %d (%d bytes) was overwritten by a later body", i, len(want[i]))
		}
		for j := range i {
			if overlaps(kept[i], kept[j]) {
				t.Errorf("bodies %d and %d share memory", i, j)
			}
		}
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func overlaps(a, b []byte) bool {
	if cap(a) == 0 || cap(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(cap(b)) && b0 < a0+uintptr(cap(a))
}

// TestNoLifecyclePlumbingInPublicAPI: the hooks through which boundhttp's
// bodies drive a decoder (releasing it without closing the source, size
// hints, in-flight waits, the end-marker question) and the decoders' state
// sizes belong to the internal engine. A Reader offers what io.Reader users
// need, and nothing else.
func TestNoLifecyclePlumbingInPublicAPI(t *testing.T) {
	t.Parallel()
	rt := reflect.TypeFor[*Reader]()
	var got []string
	for i := range rt.NumMethod() {
		got = append(got, rt.Method(i).Name)
	}
	if want := []string{"Budget", "Close", "Read", "ReadAll", "Usage"}; !reflect.DeepEqual(got, want) {
		t.Errorf("(*Reader) methods = %v, want %v", got, want)
	}
	for name, f := range sourceFiles(t) {
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						if id.IsExported() {
							t.Errorf("%s: exported constant %s", name, id.Name)
						}
					}
				}
			}
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Name.Name == "init" {
				t.Errorf("%s: an init function: the package reaches nothing through hooks", name)
			}
		}
	}
}

// sourceFiles parses the package's non-test files.
func sourceFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	if len(files) == 0 {
		t.Fatal("no source file parsed")
	}
	return files
}
