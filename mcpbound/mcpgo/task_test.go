package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// taskServer returns a server with task tools: "big" leaves a result of
// 300,000 characters for tasks/result, "fails" fails with an error of that
// size; each handler through wrap.
func taskServer(wrap func(server.TaskToolHandlerFunc) server.TaskToolHandlerFunc) *server.MCPServer {
	s := server.NewMCPServer("mcpgo-tasks", "1.0.0", server.WithTaskCapabilities(true, true, true))
	big := mixed(300000)
	s.AddTaskTool(mcp.NewTool("big", mcp.WithTaskSupport(mcp.TaskSupportRequired)), wrap(
		func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			return &mcp.CreateTaskResult{Content: []mcp.Content{mcp.NewTextContent(big)}}, nil
		}))
	s.AddTaskTool(mcp.NewTool("fails", mcp.WithTaskSupport(mcp.TaskSupportRequired)), wrap(
		func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			return nil, errors.New(big)
		}))
	return s
}

// taskResult calls tool as a task and returns what tasks/result gives,
// through c's transport (mcp-go's client parses a task's creation as a
// tool's result, and fails on it).
func taskResult(t *testing.T, c *client.Client, tool string) (*mcp.TaskResultResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := c.GetTransport()
	resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1000)), Method: "tools/call",
		Params: map[string]any{"name": tool, "task": map[string]any{}}})
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/call %s as a task: %v %+v", tool, err, resp.Error)
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("tools/call %s as a task: %v %s", tool, err, resp.Result)
	}
	resp, err = tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1001)), Method: "tasks/result",
		Params: map[string]any{"taskId": created.Task.TaskId}})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, errors.New(resp.Error.Message)
	}
	return mcp.ParseTaskResultResult(&resp.Result)
}

// connectTasks is connect with protocol version 2025-11-25, which has tasks
// and takes requests without the newer versions' per-request _meta.
func connectTasks(t *testing.T, url string, wrap func(transport.Interface) transport.Interface) *client.Client {
	t.Helper()
	return connectVersion(t, url, wrap, mcp.ProtocolVersion20251125)
}

// TestTaskResultsCapped pins the trap "a task's result is a tool's result
// delivered later": mcp-go runs AddTaskTool handlers without tool middleware
// and tasks/result handed out 300,000 characters under a 2,000 cap; a
// client's ClientLimits held tools/call only. Now a handler wrapped with
// ServerLimits.TaskTool leaves a capped result (and its failure an isError
// result, capped), and ClientLimits.Transport applies its ceilings to
// tasks/result as to tools/call. Sabotage: TaskTool returning h unchanged
// fails the server half; the client's case for tasks/result removed fails
// the client half.
func TestTaskResultsCapped(t *testing.T) {
	const limit = 2000
	capped := taskServer(ServerLimits{MaxResultChars: limit}.TaskTool)
	c := connectTasks(t, serve(t, capped), nil)
	for _, tool := range []string{"big", "fails"} {
		r, err := taskResult(t, c, tool)
		if err != nil {
			t.Fatalf("%s: tasks/result: %.200v", tool, err)
		}
		text, _ := textOf(&mcp.CallToolResult{Content: r.Content})
		if chars(text) > limit || !strings.Contains(text, "[truncated") {
			t.Errorf("%s through TaskTool: tasks/result gave %d characters, want at most %d with the marker", tool, chars(text), limit)
		}
		if tool == "fails" && !r.IsError {
			t.Errorf("a failed task's result is not flagged isError")
		}
	}
	plain := taskServer(func(h server.TaskToolHandlerFunc) server.TaskToolHandlerFunc { return h })
	cl := connectTasks(t, serve(t, plain), ClientLimits{MaxChars: limit, SpillDir: t.TempDir()}.Transport)
	r, err := taskResult(t, cl, "big")
	if err != nil {
		t.Fatalf("tasks/result: %v", err)
	}
	text, _ := textOf(&mcp.CallToolResult{Content: r.Content})
	if chars(text) > limit || !strings.Contains(text, "[saved:") {
		t.Errorf("client ceilings on tasks/result: %d characters (%.100q), want a saved result's note of at most %d", chars(text), text, limit)
	}
	_ = mcpcore.DefaultMaxErrorChars
}
