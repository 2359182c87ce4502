package boundhttp

import "time"

// A testing/synctest bubble runs its goroutines on a clock of its own.
// Timers made in a bubble follow that clock, and the runtime aborts the
// process when one is stopped or reset outside it; a timer made outside
// follows the real clock wherever it is used. So what lives beyond one
// request and is armed per request (the round trip's pooled timer, the
// Middleware's watchdog) is never shared across that border.

// inBubble reports whether the calling goroutine is in a testing/synctest
// bubble.
func inBubble() bool { return bubbleTime(time.Now()) }

// bubbleTime reports whether now, just read from the clock, was read in a
// testing/synctest bubble, whose clock has no monotonic reading.
func bubbleTime(now time.Time) bool { return now == now.Round(0) }
