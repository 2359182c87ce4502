package crosssdk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/boundhttp/boundhttp/mcpbound"
	"github.com/boundhttp/boundhttp/mcpbound/mcpgo"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// A peer is a client session on either SDK, seen the same way: what a
// tools/call answered, what one resources/read answered, and the adapter's
// ReadLink.
type peer interface {
	call(t *testing.T, tool string) callObs
	// callErr calls tool and returns the error the call failed with, nil
	// when it did not fail.
	callErr(tool string) error
	read(t *testing.T, uri string) (pageObs, *readErr)
	readLink(uri string) (string, error)
}

// callObs is a tools/call result as either SDK's client hands it over, with
// the random parts (link ids, saved files' paths) replaced, so that two
// SDKs' results compare equal when they say the same.
type callObs struct {
	Text       string   // the text blocks joined by "\n"
	Kinds      []string // the content items' types, in order
	Link       string   // the resource_link: URI, name, MIME type, size, description
	IsError    bool
	Structured string // structuredContent as JSON; "" for none
	File       string // what the file the text names holds; "" for none
	uri        string // the link's URI as sent
	file       string // the file's path as sent
}

// pageObs is one resources/read result.
type pageObs struct {
	Items []string // each contents item: URI, MIME type, text, _meta
	Meta  string   // the result's _meta members page, pages and next, as JSON; "" for none
	Cache string   // the caching hints: scope and time to live
	next  string   // the next page's URI (the navigation note's _meta.next), as sent
	data  string   // the page's data, as sent
}

// readErr is a failed resources/read.
type readErr struct {
	Code    int64
	Message string
}

var (
	idRE   = regexp.MustCompile(`(mcpbound://result/|result-)[0-9a-f]{8}([0-9a-f]{24})?`)
	fileRE = regexp.MustCompile(`saved to the file (\S+) \(`)
)

// norm replaces the random parts of s: link ids, and path (a saved file's)
// if not empty.
func norm(s, path string) string {
	if path != "" {
		s = strings.ReplaceAll(s, path, "<file>")
	}
	return idRE.ReplaceAllString(s, "${1}<id>")
}

// finish fills in the saved file and normalizes the text.
func (o *callObs) finish(t *testing.T, text string) {
	t.Helper()
	if m := fileRE.FindStringSubmatch(text); m != nil {
		o.file = m[1]
		b, err := os.ReadFile(o.file)
		if err != nil {
			t.Errorf("the file the note names: %v", err)
		}
		o.File = string(b)
	}
	o.Text = norm(text, o.file)
	o.Link = norm(o.Link, "")
}

// quiet is the logger of the client limits in these tests.
var quiet = slog.New(slog.DiscardHandler)

// dial connects a client on sdk to the server at url, with the client
// limits l (a private SpillDir unless given), and lists the tools, as a
// client that learns tools' own ceilings does.
func dial(t *testing.T, sdk, url string, l mcpcore.ClientLimits) peer {
	t.Helper()
	if l.SpillDir == "" {
		l.SpillDir = privateDir(t)
	}
	l.Logger = quiet
	if sdk == goSDK {
		return dialGoSDK(t, url, gosdk.Middleware(mcpbound.ClientLimits(l).Middleware()))
	}
	return dialMCPGo(t, url, mcpgo.ClientLimits(l).Transport)
}

// goSDKPeer is a client session of the official Go SDK.
type goSDKPeer struct{ cs *gosdk.ClientSession }

// dialGoSDK connects a Go SDK client with mw (if any) as its sending
// middleware and lists the tools.
func dialGoSDK(t *testing.T, url string, mw gosdk.Middleware) *goSDKPeer {
	t.Helper()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, nil)
	if mw != nil {
		c.AddSendingMiddleware(mw)
	}
	cs, err := c.Connect(context.Background(), &gosdk.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return &goSDKPeer{cs}
}

func (p *goSDKPeer) callErr(name string) error {
	_, err := p.cs.CallTool(context.Background(), &gosdk.CallToolParams{Name: name})
	return err
}

func (p *goSDKPeer) call(t *testing.T, name string) callObs {
	t.Helper()
	r, err := p.cs.CallTool(context.Background(), &gosdk.CallToolParams{Name: name})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	o := callObs{IsError: r.IsError, Structured: asJSON(r.StructuredContent)}
	var texts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *gosdk.TextContent:
			o.Kinds = append(o.Kinds, "text")
			texts = append(texts, c.Text)
		case *gosdk.ResourceLink:
			o.Kinds = append(o.Kinds, "resource_link")
			o.uri = c.URI
			o.Link = linkText(c.URI, c.Name, c.MIMEType, c.Description, c.Size)
		case *gosdk.ImageContent:
			o.Kinds = append(o.Kinds, "image:"+c.MIMEType)
		default:
			o.Kinds = append(o.Kinds, "other")
		}
	}
	o.finish(t, strings.Join(texts, "\n"))
	return o
}

func (p *goSDKPeer) read(t *testing.T, uri string) (pageObs, *readErr) {
	t.Helper()
	res, err := p.cs.ReadResource(context.Background(), &gosdk.ReadResourceParams{URI: uri})
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.Fatalf("resources/read %s: %v, not a JSON-RPC error", uri, err)
		}
		return pageObs{}, &readErr{Code: je.Code, Message: norm(je.Message, "")}
	}
	var o pageObs
	for _, c := range res.Contents {
		o.Items = append(o.Items, norm(c.URI+" | "+c.MIMEType+" | "+c.Text+" | "+asJSON(map[string]any(c.Meta)), ""))
		if nav, _ := c.Meta[mcpcore.NavigationKey].(bool); nav {
			o.next, _ = c.Meta[mcpcore.NextKey].(string)
		} else {
			o.data += c.Text
		}
	}
	o.Meta = pageMeta(res.Meta)
	o.Cache = res.CacheScope + " " + jsonNumber(res.TTLMs)
	return o, nil
}

func (p *goSDKPeer) readLink(uri string) (string, error) {
	return mcpbound.ReadLink(context.Background(), p.cs, uri, 1000, 1<<22)
}

// mcpGoPeer is a client of mcp-go.
type mcpGoPeer struct{ c *client.Client }

// dialMCPGo connects an mcp-go client, its transport wrapped by wrap unless
// nil, and lists the tools. It asks for protocol version 2025-11-25, the
// one the Go SDK's client asks for.
func dialMCPGo(t *testing.T, url string, wrap func(transport.Interface) transport.Interface) *mcpGoPeer {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	var base transport.Interface = tr
	if wrap != nil {
		base = wrap(tr)
	}
	c := client.NewClient(base)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcpgomcp.InitializeRequest{}
	// The newest version both SDKs speak: a go-sdk v1.8.0 server refuses
	// mcp-go's latest (2026-07-28) with "unsupported protocol version".
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcpgomcp.Implementation{Name: "mcp-go-client", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(ctx, mcpgomcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	return &mcpGoPeer{c}
}

func (p *mcpGoPeer) callErr(name string) error {
	req := mcpgomcp.CallToolRequest{}
	req.Params.Name = name
	_, err := p.c.CallTool(context.Background(), req)
	return err
}

func (p *mcpGoPeer) call(t *testing.T, name string) callObs {
	t.Helper()
	req := mcpgomcp.CallToolRequest{}
	req.Params.Name = name
	r, err := p.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	o := callObs{IsError: r.IsError, Structured: asJSON(r.StructuredContent)}
	var texts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case mcpgomcp.TextContent:
			o.Kinds = append(o.Kinds, "text")
			texts = append(texts, c.Text)
		case mcpgomcp.ResourceLink:
			o.Kinds = append(o.Kinds, "resource_link")
			o.uri = c.URI
			o.Link = linkText(c.URI, c.Name, c.MIMEType, c.Description, c.Size)
		case mcpgomcp.ImageContent:
			o.Kinds = append(o.Kinds, "image:"+c.MIMEType)
		default:
			o.Kinds = append(o.Kinds, "other")
		}
	}
	o.finish(t, strings.Join(texts, "\n"))
	return o
}

func (p *mcpGoPeer) read(t *testing.T, uri string) (pageObs, *readErr) {
	t.Helper()
	req := mcpgomcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := p.c.ReadResource(context.Background(), req)
	if err != nil {
		for code, sentinel := range map[int64]error{-32602: mcpgomcp.ErrInvalidParams, -32603: mcpgomcp.ErrInternalError, -32002: mcpgomcp.ErrResourceNotFound} {
			if errors.Is(err, sentinel) {
				return pageObs{}, &readErr{Code: code, Message: norm(strings.TrimPrefix(err.Error(), sentinel.Error()+": "), "")}
			}
		}
		t.Fatalf("resources/read %s: %v, not a JSON-RPC error", uri, err)
	}
	var o pageObs
	for _, rc := range res.Contents {
		c, ok := rc.(mcpgomcp.TextResourceContents)
		if !ok {
			o.Items = append(o.Items, "not text")
			continue
		}
		o.Items = append(o.Items, norm(c.URI+" | "+c.MIMEType+" | "+c.Text+" | "+asJSON(c.Meta), ""))
		if nav, _ := c.Meta[mcpcore.NavigationKey].(bool); nav {
			o.next, _ = c.Meta[mcpcore.NextKey].(string)
		} else {
			o.data += c.Text
		}
	}
	if res.Meta != nil {
		o.Meta = pageMeta(res.Meta.AdditionalFields)
	}
	o.Cache = string(res.CacheScope) + " " + jsonNumber(res.TTLMs)
	return o, nil
}

func (p *mcpGoPeer) readLink(uri string) (string, error) {
	return mcpgo.ReadLink(context.Background(), p.c, uri, 1000, 1<<22)
}

// asJSON returns v as JSON ("" for nil): maps come out with sorted keys.
func asJSON(v any) string {
	if v == nil {
		return ""
	}
	if m, ok := v.(map[string]any); ok && m == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	return string(b)
}

// jsonNumber returns what a number field holds, "absent" for a nil pointer.
func jsonNumber(v any) string {
	switch v := v.(type) {
	case *int64:
		if v == nil {
			return "absent"
		}
		return asJSON(*v)
	}
	return asJSON(v)
}

// pageMeta returns the members of a resources/read result's _meta that
// the caps set (page, pages, next) as JSON, "" when there are none: the
// SDKs add members of their own (the server's identity) that are no part
// of the caps.
func pageMeta(meta map[string]any) string {
	m := map[string]any{}
	for _, k := range []string{"page", "pages", mcpcore.NextKey} {
		if v, ok := meta[k]; ok {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return ""
	}
	return norm(asJSON(m), "")
}

// linkText describes a resource_link.
func linkText(uri, name, mime, desc string, size *int64) string {
	s := "absent"
	if size != nil {
		s = asJSON(*size)
	}
	return strings.Join([]string{uri, name, mime, s, desc}, " | ")
}
