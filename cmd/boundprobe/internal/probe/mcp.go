package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// mcpProtocolVersion is the MCP protocol version the probe asks for in
// initialize; the server's answer is used from then on.
const mcpProtocolVersion = "2025-06-18"

// maxMCPAnswer is the most bytes of one MCP answer read (a tools/list
// page, say), and of the results of all tools/list pages together.
const maxMCPAnswer = 16 << 20

// maxToolPages is the most tools/list pages followed.
const maxToolPages = 100

// An MCPError reports that the MCP conversation failed: the endpoint
// answered initialize or tools/list with something other than a JSON-RPC
// result.
type MCPError struct {
	Method string
	Err    error
}

func (e *MCPError) Error() string { return "mcp " + e.Method + ": " + e.Err.Error() }

func (e *MCPError) Unwrap() error { return e.Err }

// mcpClient speaks the MCP streamable HTTP transport by hand: JSON-RPC
// messages POSTed to the one endpoint, answered with JSON or with an event
// stream.
type mcpClient struct {
	client *http.Client
	url    string
	// header is -H plus, once initialized, the session's headers.
	header http.Header
	// session is the Mcp-Session-Id the server assigned, "" if none.
	session string
	nextID  int
}

// newHTTPClient returns the client of the MCP conversation: no proxy from
// the environment, no redirect followed, no transparent decompression (the
// answer is read through a bounded decoder instead).
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			DisableCompression:    true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
	}
}

// open runs initialize and notifications/initialized, and sets the
// session's headers (Mcp-Session-Id, MCP-Protocol-Version) on c.header.
func (c *mcpClient) open(ctx context.Context) error {
	params := map[string]any{
		"protocolVersion": mcpProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "boundprobe", "version": "v0"},
	}
	res, hdr, err := c.call(ctx, "initialize", params)
	if err != nil {
		return err
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &init); err != nil || init.ProtocolVersion == "" {
		return &MCPError{"initialize", errors.New("the result names no protocolVersion")}
	}
	if id := hdr.Get("Mcp-Session-Id"); id != "" {
		c.session = id
		c.header.Set("Mcp-Session-Id", id)
	}
	c.header.Set("MCP-Protocol-Version", init.ProtocolVersion)
	return c.notify(ctx, "notifications/initialized")
}

// listTools returns the tools of every tools/list page as one document
// {"tools": [...]}, the form [schema.AuditTools] reads.
func (c *mcpClient) listTools(ctx context.Context) ([]byte, error) {
	var tools []json.RawMessage
	cursor := ""
	total := 0 // bytes of all pages' results, bounded like one answer
	for range maxToolPages {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, _, err := c.call(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		if total += len(res); total > maxMCPAnswer {
			return nil, &MCPError{"tools/list", fmt.Errorf("more than %d bytes of tools in all pages", maxMCPAnswer)}
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, &MCPError{"tools/list", err}
		}
		tools = append(tools, page.Tools...)
		if cursor = page.NextCursor; cursor == "" {
			return json.Marshal(map[string]any{"tools": tools})
		}
	}
	return nil, &MCPError{"tools/list", fmt.Errorf("more than %d pages", maxToolPages)}
}

// close ends the session with DELETE, as the transport asks clients to;
// its answer does not matter.
func (c *mcpClient) close(ctx context.Context) {
	if c.session == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header = c.header.Clone()
	if resp, err := c.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// notify sends a notification; the answer must be 2xx.
func (c *mcpClient) notify(ctx context.Context, method string) error {
	resp, err := c.post(ctx, method, map[string]any{"jsonrpc": "2.0", "method": method})
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &MCPError{method, fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	return nil
}

// call sends a request and returns its result and the answer's header.
// A nil params is left out of the message: JSON-RPC allows params to be
// omitted, not null, and the TypeScript SDK refuses "params": null as a
// parse error.
func (c *mcpClient) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, http.Header, error) {
	c.nextID++
	id := strconv.Itoa(c.nextID)
	msg := map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	resp, err := c.post(ctx, method, msg)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, &MCPError{method, fmt.Errorf("HTTP %d (%s)", resp.StatusCode, limits.Echo(resp.Header.Get("Content-Type")))}
	}
	d, err := decoding.NewReader(resp.Body, resp.Header.Get("Content-Encoding"),
		limits.Budget{MaxWireBytes: maxMCPAnswer, MaxDecodedBytes: maxMCPAnswer})
	if err != nil {
		return nil, nil, &MCPError{method, err}
	}
	defer d.Close()
	var found *rpcMessage
	match := func(data []byte) bool {
		for _, m := range rpcMessages(data) {
			if string(m.ID) == id && m.Method == "" {
				found = &m
				return true
			}
		}
		return false
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		data, err := io.ReadAll(d)
		if err != nil {
			return nil, nil, &MCPError{method, err}
		}
		match(data)
	case "text/event-stream":
		if err := scanSSE(d, maxMCPAnswer, match); err != nil {
			return nil, nil, &MCPError{method, err}
		}
	default:
		return nil, nil, &MCPError{method, fmt.Errorf("answer of type %q", limits.Echo(mt))}
	}
	switch {
	case found == nil:
		return nil, nil, &MCPError{method, errors.New("no JSON-RPC response to the request")}
	case found.Error != nil:
		return nil, nil, &MCPError{method, fmt.Errorf("JSON-RPC error %d: %s", found.Error.Code, limits.Echo(found.Error.Message))}
	}
	return found.Result, resp.Header, nil
}

// post sends one JSON-RPC message.
func (c *mcpClient) post(ctx context.Context, method string, msg any) (*http.Response, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = c.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, &UnreachableError{err}
		}
		return nil, &MCPError{method, err}
	}
	return resp, nil
}

// An rpcMessage is one JSON-RPC message as far as the probe reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcMessages returns the messages of data: one object or a batch.
func rpcMessages(data []byte) []rpcMessage {
	var one rpcMessage
	if json.Unmarshal(data, &one) == nil {
		return []rpcMessage{one}
	}
	var batch []rpcMessage
	json.Unmarshal(data, &batch)
	return batch
}
