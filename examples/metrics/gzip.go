package main

import (
	"bytes"
	"compress/gzip"
)

// gzipped returns data gzip-compressed.
func gzipped(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}
