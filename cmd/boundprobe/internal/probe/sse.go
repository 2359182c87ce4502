package probe

import (
	"bufio"
	"bytes"
	"io"
)

// scanSSE reads the text/event-stream r and calls fn with the data of each
// event (its data lines joined with "\n"), until fn returns true or r ends.
// Lines are at most max bytes; the caller bounds r itself.
func scanSSE(r io.Reader, max int, fn func(data []byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), max)
	var data []byte
	have := false
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if have && fn(data) {
				return nil
			}
			data, have = data[:0], false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if have {
				data = append(data, '\n')
			}
			data, have = append(data, v...), true
		}
		// Comments (":..."), event, id and retry fields carry no data.
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if have {
		fn(data)
	}
	return nil
}
