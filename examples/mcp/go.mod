module github.com/boundhttp/boundhttp/examples/mcp

go 1.26.8

require github.com/boundhttp/boundhttp v0.0.0

require github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect

replace github.com/boundhttp/boundhttp => ../..
