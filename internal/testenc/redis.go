package testenc

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"
)

// A Redis is a redis-server started by a test on a free loopback port, in a
// temporary folder, with no persistence (no RDB snapshots, no append-only
// file). Stop and Start restart it on the same address, empty, as a store
// that was unreachable for a while and came back.
type Redis struct {
	// Addr is the server's host:port on loopback.
	Addr string
	t    testing.TB
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts a redis-server for the test and stops it when the test
// ends; it skips the test when redis-server is not installed (fails under
// CI, see [NeedTool]).
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	NeedTool(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &Redis{Addr: addr, t: t, dir: t.TempDir()}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Start runs the server on r.Addr and waits until it answers PING (20 s at
// most).
func (r *Redis) Start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.Addr)
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--protected-mode", "yes")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	done := make(chan struct{})
	r.done = done
	cmd := r.cmd
	go func() { cmd.Wait(); close(done) }()
	for i := 0; ; i++ { // bounded: 100 tries
		err := ping(r.Addr)
		if err == nil {
			return
		}
		select {
		case <-done:
			r.t.Fatalf("redis-server exited: %v", cmd.ProcessState)
		case <-time.After(100 * time.Millisecond):
		}
		if i == 100 {
			r.t.Fatalf("redis-server on %s did not answer: %v", r.Addr, err)
		}
	}
}

// Stop kills the server and waits for it to exit.
func (r *Redis) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// ping sends PING (an inline command) and reads the answer, within 200 ms.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("redis-server on %s answered %q to PING", addr, line)
	}
	return nil
}
