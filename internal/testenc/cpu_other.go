//go:build !unix

package testenc

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
