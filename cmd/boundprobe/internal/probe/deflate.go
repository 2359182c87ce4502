package probe

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// gzipRun returns the gzip member (RFC 1952) of prefix, n bytes of padByte
// and suffix, built directly rather than by a general compressor: one
// DEFLATE block with the fixed Huffman codes (RFC 1951 section 3.2.6) in
// which the run is one literal followed by copies of 258 bytes at distance
// 1, 13 bits each. It is deterministic (no name, no time), about 159:1 on
// the run, and costs one pass of CRC-32 over the decoded bytes, so that even
// 64 MiB bodies are made in milliseconds.
func gzipRun(prefix string, n int64, suffix string) []byte {
	out := make([]byte, 0, 10+len(prefix)+len(suffix)+int(n/258*13/8)+64)
	out = append(out, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff) // no flags, no mtime, OS unknown
	w := bitWriter{out: out}
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE 01: fixed Huffman codes
	for i := 0; i < len(prefix); i++ {
		w.literal(prefix[i])
	}
	if n > 0 {
		w.literal(padByte)
		rest := n - 1
		for ; rest >= 258; rest -= 258 {
			w.code(0xc5, 8) // symbol 285: length 258, no extra bits
			w.code(0, 5)    // distance code 0: distance 1
		}
		for ; rest > 0; rest-- {
			w.literal(padByte)
		}
	}
	for i := 0; i < len(suffix); i++ {
		w.literal(suffix[i])
	}
	w.code(0, 7) // symbol 256: end of block
	out = w.flush()

	crc := crc32.ChecksumIEEE([]byte(prefix))
	var block [32 << 10]byte
	for i := range block {
		block[i] = padByte
	}
	for left := n; left > 0; {
		k := min(left, int64(len(block)))
		crc = crc32.Update(crc, crc32.IEEETable, block[:k])
		left -= k
	}
	crc = crc32.Update(crc, crc32.IEEETable, []byte(suffix))
	size := uint32(int64(len(prefix)) + n + int64(len(suffix))) // ISIZE: the size modulo 2^32
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, size)
}

// bitWriter packs DEFLATE bits, least significant bit first.
type bitWriter struct {
	out   []byte
	acc   uint64
	nbits uint
}

// bits writes the n low bits of v, least significant first (header fields
// and extra bits).
func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

// code writes the Huffman code c of n bits, most significant bit first.
func (w *bitWriter) code(c uint64, n uint) {
	w.bits(bits.Reverse64(c)>>(64-n), n)
}

// literal writes the fixed Huffman code of byte b.
func (w *bitWriter) literal(b byte) {
	if b < 144 {
		w.code(0x30+uint64(b), 8)
	} else {
		w.code(0x190+uint64(b-144), 9)
	}
}

// flush writes the last partial byte and returns the output.
func (w *bitWriter) flush() []byte {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	w.acc, w.nbits = 0, 0
	return w.out
}
