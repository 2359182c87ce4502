// Package decoding removes HTTP content-codings (gzip, deflate, br, zstd)
// from a body while charging it against a [limits.Budget].
//
// The limit sits inside the decoder: each decoder is asked for at most the
// bytes that remain in the budget plus one, so a bomb is detected one byte
// past the limit, and what is held in memory grows with the bytes actually
// decoded, never with a size a header declares. Bytes read
// from a [Reader] are tentative until it returns [io.EOF], which it does only
// after every coding ended cleanly: end-of-stream marker seen, checksums
// verified where the coding has them (see "What each coding verifies"), no
// trailing bytes, no extra gzip member or zstd frame. [ReadAll]
// returns the whole verified body or an error, never a prefix.
//
// # Codings
//
//   - gzip (and x-gzip): RFC 1952 members. One member by default; see
//     [WithMaxMembers].
//   - deflate: the zlib format (RFC 1950) that RFC 9110 section 8.4.1.2
//     requires. Raw DEFLATE without the zlib wrapper is rejected with
//     [limits.StageIntegrity]: it carries no checksum, so a corrupt body
//     could not be told from a good one, and accepting it would make the
//     verdict depend on a guess.
//   - br: brotli (RFC 7932). Standard windows (up to 16 MiB) are always
//     accepted; large-window streams (RFC 9841) only when their window fits
//     [limits.Budget.MaxWindowBytes]. What a brotli stream can cost, whatever
//     the decoded limit: the ring buffer, which the decoder sizes from the
//     declared window and the declared length of each meta-block (output so
//     far plus that length), not from the output (four bytes declaring a
//     16 MiB window and a 16 MiB uncompressed meta-block allocate 16 MiB plus
//     42 bytes at once, measured on andybalholm/brotli v1.3.0), plus the Huffman tables a meta-block
//     header may ask for (up to 256 trees for each of three alphabets:
//     3.2 MiB at most, tens of KiB in practice), plus about 40 KiB of reader.
//     So a standard stream costs up to 16 MiB + 3.3 MiB before it outputs a
//     byte. Standard windows are not held to MaxWindowBytes because real
//     encoders emit them: the brotli tool (1.0.9) writes WBITS 24 whenever
//     it reads a pipe and for files over 8 MiB (WBITS 11 for 1 KB, 17 for
//     64 KiB, 21 for 1 MiB, 23 for 5 MB). The process-wide answer is
//     [WithInFlight], which charges 1.5 times the declared window (the
//     decoder grows its ring buffer by copying it into one twice as large)
//     plus the decoder's own state before the decoder exists.
//   - zstd: RFC 8878 frames. The frame headers are checked as the bytes pass,
//     before the decoder sees them: a window above MaxWindowBytes is a
//     [limits.StageWindow] rejection, declared content sizes whose sum exceeds
//     MaxDecodedBytes a [limits.StageDecoded] one, both before any history is
//     allocated. One frame by default; see [WithMaxMembers]. Checksums are
//     verified when present; see [WithRequireChecksum] to require them.
//   - identity, and an empty Content-Encoding: bytes pass unchanged, charged
//     to both the wire and the decoded limit.
//
// A body of zero wire bytes is an empty body under any coding, as Go's own
// transport treats it.
//
// # What each coding verifies
//
// "Ended cleanly" means what the coding can check, and that differs:
//
//   - gzip: per member, a CRC-32 of the decoded bytes and their length
//     modulo 2^32 (ISIZE). A corrupt or truncated member is rejected.
//   - deflate (zlib): an Adler-32 of the decoded bytes. Adler-32 is weak
//     for short inputs but catches bit flips and truncation.
//   - zstd: the frame structure, and a content checksum (the low 32 bits
//     of an XXH64 of the decoded bytes) only if the frame carries one (the
//     Content_Checksum_flag is optional; most encoders set it, some servers
//     do not).
//   - br: brotli has no checksum. Only its own stream structure is checked
//     (valid meta-blocks, the last-block marker, no trailing bytes); a bit
//     flip that leaves the structure valid decodes to different content
//     and is accepted.
//   - identity: nothing. Only the framing below (Content-Length, chunked,
//     HTTP/2 END_STREAM) tells where the body ends.
//
// [WithRequireChecksum] accepts only bodies whose every coding verifies its
// content with a checksum: it rejects br, zstd frames without a checksum
// and non-empty bodies without a content-coding, with
// [limits.StageIntegrity].
//
// # Timeout
//
// [limits.Budget.Timeout] runs from the first Read of a [Reader]. The
// elapsed time is checked when Read is called and again when the source's
// Read returns, so a body whose end arrived after the deadline is rejected
// with [limits.StageTimeout] even when its last bytes came together with
// io.EOF; a Read that returns after the deadline returns no bytes.
//
// The Reader cannot interrupt a Read blocked in its source: a plain
// [io.Reader] offers no way to, and a source that never returns blocks Read
// forever. The Reader does not close its source on a timer either: closing
// concurrently with a Read is safe for some sources only (net/http bodies,
// [net.Conn]) and would race the caller's own Close. To bound a blocked
// read, close the source from another goroutine where the source allows it,
// or set a deadline on the connection; then Read returns the source's
// error. boundhttp's Transport and Middleware do this for their bodies (the
// Transport closes the source when a deadline passes, and the connection
// the request got if closing the source does not return). No goroutine or
// timer is started by this package.
//
// # Layers
//
// A list such as "gzip, br" is removed last-applied-first (br, then gzip).
// Every layer's output is held to MaxDecodedBytes, intermediate layers
// included, so no stage can expand without bound; the output of the last
// layer is what is reported and charged as decoded bytes.
package decoding
