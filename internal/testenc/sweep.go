package testenc

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
)

// SweepCell is one cell of a [StatusSweep]: its name, the status every try
// must get, and the request it sends (a new one per try).
type SweepCell struct {
	Name string
	Want int
	Send func() (*http.Response, error)
}

// StatusSweep sends each cell's request tries times, at most four at once,
// reads every answer to its end, and fails t unless every try of every cell
// got the cell's Want. The table of answers per cell (a failed request
// counts as "error"; a proxy that lost the answer gives 502) is logged
// either way, or printed with the failure.
func StatusSweep(t testing.TB, tries int, cells []SweepCell) {
	t.Helper()
	got := make([]map[string]int, len(cells))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, c := range cells {
		got[i] = map[string]int{}
		for range tries {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				key := "error"
				if resp, err := c.Send(); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					key = fmt.Sprint(resp.StatusCode)
				}
				mu.Lock()
				got[i][key]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	lines := make([]string, len(cells))
	bad := false
	for i, c := range cells {
		if got[i][fmt.Sprint(c.Want)] != tries {
			bad = true
		}
		lines[i] = fmt.Sprintf("%-28s want %d: %v (502: %d of %d)", c.Name, c.Want, got[i], got[i]["502"], tries)
	}
	sort.Strings(lines)
	if bad {
		t.Errorf("through the proxy, want every answer as the cell's own:\n%s", strings.Join(lines, "\n"))
	} else {
		t.Logf("through the proxy:\n%s", strings.Join(lines, "\n"))
	}
}
