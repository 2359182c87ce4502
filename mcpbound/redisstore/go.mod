module github.com/boundhttp/boundhttp/mcpbound/redisstore

go 1.25.0

replace github.com/boundhttp/boundhttp => ../..

require (
	github.com/boundhttp/boundhttp v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	github.com/andybalholm/brotli v1.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
