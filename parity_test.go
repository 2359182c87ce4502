package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestParity runs one table of bodies through the Transport (from a plain
// server) and through the Middleware (from a plain client) with the same
// Budget: every verdict and every stage must agree, and accepted bodies
// must arrive byte for byte.
func TestParity(t *testing.T) {
	t.Parallel()
	const decoded, wire = 20000, 12000
	budget := limits.Budget{MaxDecodedBytes: decoded, MaxWireBytes: wire}
	type entry struct {
		name, coding string
		body         []byte
		chunked      bool
	}
	var table []entry
	for _, c := range codings {
		for _, n := range []int{0, 1, decoded - 1, decoded, decoded + 1} {
			for _, chunked := range []bool{false, true} {
				table = append(table, entry{fmt.Sprintf("%s %d", c, n), c, encode(c, text(n)), chunked})
			}
		}
		table = append(table, entry{c + " bomb", c, encode(c, bytes.Repeat([]byte("p"), 1<<20)), false})
	}
	gz := encode("gzip", text(5000))
	table = append(table,
		entry{"identity at wire limit", "identity", bytes.Repeat([]byte("w"), wire), true},
		entry{"identity over wire limit", "identity", bytes.Repeat([]byte("w"), wire+1), false},
		entry{"identity over wire limit, chunked", "identity", bytes.Repeat([]byte("w"), wire+1), true},
		entry{"gzip truncated", "gzip", gz[:len(gz)-3], false},
		entry{"gzip trailing", "gzip", append(append([]byte(nil), gz...), 0), false},
		entry{"gzip two members", "gzip", append(append([]byte(nil), gz...), gz...), false},
		entry{"unknown coding", "compress", []byte("x"), false},
		entry{"three layers", "gzip, gzip, gzip", testencLayered([]byte("x"), "gzip", "gzip", "gzip"), false},
		entry{"two-layer bomb", "gzip, br", testencLayered(bytes.Repeat([]byte("p"), 4<<20), "gzip", "br"), false},
	)

	var mu sync.Mutex // guards current and handlerGot
	var current entry
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		e := current
		mu.Unlock()
		serve(w, body{coding: e.coding, data: e.body, chunked: e.chunked})
	}))
	defer plain.Close()
	var handlerGot []byte
	mw := boundhttp.Middleware(budget)
	bounded := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		handlerGot = data
		mu.Unlock()
	})))
	defer bounded.Close()
	tr := &boundhttp.Transport{Budget: budget}
	defer tr.CloseIdleConnections()

	for _, e := range table {
		mu.Lock()
		current, handlerGot = e, nil
		mu.Unlock()
		_, clientGot, err := get(t, tr, plain.URL)
		clientStage := stageOf(err)

		status, answer := post(t, bounded.URL, e.coding, e.body, e.chunked)
		serverStage := ""
		if status != 200 {
			serverStage = string(problem(t, answer).Stage)
		}
		if clientStage != serverStage {
			t.Errorf("%s (chunked %v): Transport stage %q, Middleware stage %q (status %d)", e.name, e.chunked, clientStage, serverStage, status)
			continue
		}
		mu.Lock()
		got := handlerGot
		mu.Unlock()
		if clientStage == "" && !bytes.Equal(clientGot, got) {
			t.Errorf("%s: Transport got %d bytes, handler got %d", e.name, len(clientGot), len(got))
		}
		if clientStage != "" && status != boundhttp.StatusOf(limits.Stage(clientStage)) {
			t.Errorf("%s: status %d for stage %s, want %d", e.name, status, clientStage, boundhttp.StatusOf(limits.Stage(clientStage)))
		}
	}
}

// TestContentEncodingOnSeveralLines: a coding list split over several
// header lines ("Content-Encoding: gzip" then "Content-Encoding: br") is one
// list on both sides; reading only one line would hand on coded bytes.
func TestContentEncodingOnSeveralLines(t *testing.T) {
	t.Parallel()
	data := text(20000)
	wire := testencLayered(data, "gzip", "br")
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Content-Encoding", "gzip")
		w.Header().Add("Content-Encoding", "br")
		w.Write(wire)
	}))
	defer s.Close()
	_, got, err := get(t, &boundhttp.Transport{}, s.URL)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("Transport, two Content-Encoding lines: %d bytes, %v; want the %d decoded bytes", len(got), err, len(data))
	}
	var handlerGot []byte
	srv := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlerGot, _ = io.ReadAll(r.Body)
	})))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader(wire))
	req.Header.Add("Content-Encoding", "gzip")
	req.Header.Add("Content-Encoding", "br")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(handlerGot, data) {
		t.Errorf("Middleware, two Content-Encoding lines: status %d, handler got %d bytes; want 200 and %d", resp.StatusCode, len(handlerGot), len(data))
	}
}
