package decoding

import (
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// An Option changes how a [Reader] accepts a body. Options are applied by
// [NewReader] and [ReadAll], which report the first invalid one, and by
// boundhttp's Transport and Middleware, which report it before any body
// is read.
type Option func(*decoder.Config) error

// WithMaxMembers allows up to n concatenated gzip members, and up to n zstd
// frames (skippable frames included), in one layer. All of them are charged
// against the one decoded total of the budget; the cap exists because empty
// members cost CPU and produce nothing. The default is 1: a second member or
// frame is rejected with [limits.StageIntegrity]. Zero means the default;
// negative is an error.
func WithMaxMembers(n int) Option { return Option(decoder.WithMaxMembers(n)) }

// WithRequireChecksum accepts only bodies whose every content-coding
// verifies the decoded bytes with a checksum: gzip (CRC-32 and length per
// member), deflate (the zlib format's Adler-32) and zstd frames that carry
// their content checksum. A zstd frame without the checksum flag, any br
// stream (brotli has no checksum) and a body of one byte or more with no
// content-coding at all (identity has nothing to verify) are rejected with
// [limits.StageIntegrity] before their content is decoded. A body of zero
// wire bytes is empty under any coding and passes. The default is off: such
// bodies are accepted on the strength of their own stream structure (see
// the package documentation for what each coding verifies).
func WithRequireChecksum() Option { return Option(decoder.WithRequireChecksum()) }

// WithInFlight charges the body to the process-wide budget f (nil: none):
// the state of each decoder before it is allocated, and, in [ReadAll] and
// [Reader.ReadAll], the bytes read ahead and the buffered body. Nothing is
// charged before the body's first byte. What a decoder is charged:
//
//   - gzip, deflate: 64 KiB per layer (the 32 KiB window, the Huffman
//     tables and the 4 KiB input buffer), when its first byte came.
//   - zstd: 640 KiB (block and literal buffers and tables) plus the window
//     the frame header declares, per layer, when the header has been read
//     and before the decoder sees it (the largest window of the layer's
//     frames).
//   - br: 3.5 MiB (the largest Huffman tree groups a meta-block header can
//     ask for, the reader and its buffers) plus 1.5 times the window the
//     stream header declares (its first one or two bytes: the decoder grows
//     its ring buffer by copying it into one twice as large), before the
//     brotli decoder is created.
//   - identity: nothing.
//
// These are measured with runtime.MemStats and rounded up.
//
// A whole-body read first reads ahead, undecoded: nothing is charged until
// its first 512 bytes came, then the bytes read (in chunks of at most
// twice their size, against the budget's starting room, a quarter of it)
// until the peer has sent 1/128 of the body's bound, or the body ended (with
// a MaxWireBytes below that 1/128, until the body ends or passes it), or its
// Timeout passed.
// The bound is what remains of MaxDecodedBytes (for the Transport and
// Middleware, an identity body's Content-Length when it is smaller), one
// chunk and up to one more of slack, and the most its decoders' state can
// be charged (with the window at MaxWindowBytes). Then it reserves that
// bound, in one reservation together with the first decoder's state, and
// decodes; the bytes read are charged against the reservation as they are
// buffered; what it did not use is given back at the verified end. So a
// peer holds at most 128 bytes of the budget per byte it sent before the
// body ended. A body whose bound is above what it may wait for (the capacity less the
// starting room and, for a peer, a share: half with the default), or that finds
// the starting room full, reads nothing ahead and reserves after its first
// 512 bytes. A body read as a stream is charged its decoders' state as
// above, from its first byte.
//
// A body's first reservation may wait for room, and so may the reservation
// of a whole body's bound after it read ahead (it holds only bytes read
// ahead; see [limits.InFlight] for why that cannot deadlock); with a Reader
// of this package they never wait (boundhttp's Transport and Middleware let
// them wait as their InFlight fields document). Every later one (a second
// layer's decoder, a zstd frame with a larger window, chunks beyond the
// bound) fails at once. A refusal is a [*limits.Error] of
// [limits.StageInFlight] (errors.Is [limits.ErrBusy]), sticky like every
// breach; its Observed above its Limit means the body could never fit.
//
// Decoder state is given back when the decoders are released (at the end of
// a whole-body read, or on Close); the buffered body when [ReadAll] returns
// (the slice is the caller's and is not charged). A streaming Reader that
// is never closed keeps its charge.
//
// Given to boundhttp's Transport or Middleware in DecodeOptions, it is the
// same as their InFlight field: the body waits for room as that field
// documents, and every charge ends when the body or the handler is done.
func WithInFlight(f *limits.InFlight) Option { return Option(decoder.WithInFlight(f)) }
