package mcpcore

import (
	"strconv"

	"github.com/boundhttp/boundhttp/internal/testenc"
)

// mixed returns a text of n characters of one- to four-byte UTF-8.
var mixed = testenc.MixedText

var itoa = strconv.Itoa

// parseMarker returns N and M of the first marker in s.
var parseMarker = testenc.ParseMarker

// clip shortens s for a failure message.
var clip = testenc.Clip
