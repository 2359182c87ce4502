module github.com/boundhttp/boundhttp

go 1.25.0

require (
	github.com/andybalholm/brotli v1.3.0
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.4
)
