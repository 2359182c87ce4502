// Package testenc makes test bodies: deterministic text and the codings of
// HTTP, written with the encoders of the libraries the decoders come from.
// It is for tests only.
package testenc

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Codings lists identity and every coding the library decodes.
var Codings = []string{"identity", "gzip", "deflate", "br", "zstd"}

// Writer returns an encoder of coding writing to w.
func Writer(coding string, w io.Writer) (io.WriteCloser, error) {
	switch coding {
	case "gzip":
		return gzip.NewWriterLevel(w, gzip.BestCompression)
	case "deflate":
		return zlib.NewWriterLevel(w, zlib.BestCompression)
	case "br":
		return brotli.NewWriterLevel(w, 6), nil
	case "zstd":
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(true))
	}
	return nil, fmt.Errorf("testenc: unknown coding %q", coding)
}

// resetter is an encoder that can start a new stream on another writer.
type resetter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// encoders keeps one pool of encoders per coding: building a zstd encoder
// at its best level costs far more than encoding a small body, above all
// under the race detector.
var encoders sync.Map // coding -> *sync.Pool of resetter

// Encode returns data encoded with coding ("identity" or "" copies it).
// It is safe for concurrent use.
func Encode(coding string, data []byte) []byte {
	if coding == "identity" || coding == "" {
		return append([]byte(nil), data...)
	}
	p, _ := encoders.LoadOrStore(coding, new(sync.Pool))
	pool := p.(*sync.Pool)
	var buf bytes.Buffer
	w, ok := pool.Get().(resetter)
	if ok {
		w.Reset(&buf)
	} else {
		nw, err := Writer(coding, &buf)
		if err != nil {
			panic(err)
		}
		w = nw.(resetter)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		panic(err)
	}
	pool.Put(w)
	return buf.Bytes()
}

// Layered applies codings in order, as a Content-Encoding list names them.
func Layered(data []byte, codings ...string) []byte {
	for _, c := range codings {
		data = Encode(c, data)
	}
	return data
}

// Text returns n bytes of deterministic, moderately compressible JSON lines.
func Text(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString(`{"id":`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`,"name":"item `)
		b.WriteString(strconv.Itoa(i * 7919 % 10007))
		b.WriteString(`","tags":["alpha","beta"],"ok":true}` + "\n")
	}
	return b.Bytes()[:n]
}
