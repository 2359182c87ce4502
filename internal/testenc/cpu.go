package testenc

import (
	"testing"
	"time"
)

// CPUPerOp starts measuring the CPU time of the process (every goroutine:
// the benchmark's, a loopback server's, the garbage collector's) and
// returns a function that reports it per operation as the metric
// cpu-ns/op. Call it right before the benchmark loop and the function
// right after it. On a machine shared with other work, wall time per
// operation includes the time spent waiting for a CPU; CPU time does not,
// which makes its ratios far steadier. Where the CPU time cannot be read,
// nothing is reported.
func CPUPerOp(b *testing.B) func() {
	start, ok := cpuTime()
	return func() {
		end, ok2 := cpuTime()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// CPUTime returns the CPU time (user and system) the process has used so
// far, every goroutine included, and whether it could be read.
func CPUTime() (time.Duration, bool) { return cpuTime() }
