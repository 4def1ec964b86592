package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// docReader splits a YAML stream into documents line by line. It replaces
// apimachinery's YAMLReader, which drops a last line without a newline whose
// length is a multiple of its 64 KiB buffer and does not know the `...`
// document end marker; here a line is never cut, however long, and only
// MaxDocumentBytes bounds it.
type docReader struct {
	br   *bufio.Reader
	line int // lines read so far
	eof  bool
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// newDocReader decides the stream's encoding from its first bytes, as YAML
// 1.2 §5.2 does: UTF-8 with or without a byte-order mark, or UTF-16 with
// one, which is decoded. UTF-32, and UTF-16 without a mark, are refused
// rather than guessed at.
func newDocReader(r io.Reader) (*docReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, utf8BOM):
		_, _ = br.Discard(len(utf8BOM))
	case bytes.HasPrefix(head, []byte{0, 0, 0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE, 0, 0}):
		return nil, errorf(ErrEncoding, "the input is UTF-32; convert it to UTF-8")
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		_, _ = br.Discard(2)
		br = bufio.NewReaderSize(&utf16Reader{r: br, bigEndian: head[0] == 0xFE}, 64<<10)
	case len(head) >= 2 && (head[0] == 0 || head[1] == 0):
		return nil, errorf(ErrEncoding, "the input starts with a NUL byte: UTF-16 or UTF-32 without a byte-order mark is not read; convert it to UTF-8")
	}
	return &docReader{br: br}, nil
}

// next returns the next document's bytes (possibly blank) and the input
// line it starts on, or io.EOF after the last one.
func (d *docReader) next() ([]byte, int, error) {
	var buf []byte
	start := d.line + 1
	for {
		if d.eof {
			if len(buf) > 0 {
				return buf, start, nil
			}
			return nil, 0, io.EOF
		}
		lineStart := len(buf)
		for {
			chunk, err := d.br.ReadSlice('\n')
			buf = append(buf, chunk...)
			if len(buf) > MaxDocumentBytes {
				return nil, 0, errorf(ErrTooLarge, "the document starting on line %d is larger than %d bytes (MaxDocumentBytes)", start, MaxDocumentBytes)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				d.eof = true
				break
			}
			if err != nil {
				return nil, 0, err
			}
			break
		}
		if len(buf) == lineStart {
			continue
		}
		d.line++
		// YAML allows a byte-order mark at the start of every document, as
		// `cat a.yaml b.yaml` produces.
		if bytes.HasPrefix(buf[lineStart:], utf8BOM) && (lineStart == 0 || isMarker(buf[lineStart+3:], "---")) {
			buf = append(buf[:lineStart], buf[lineStart+3:]...)
		}
		line := buf[lineStart:]
		if len(line) == 0 {
			continue
		}
		switch {
		case isMarker(line, "---"):
			buf = buf[:lineStart]
			if len(bytes.TrimSpace(buf)) == 0 {
				buf, start = buf[:0], d.line+1
				continue
			}
			return buf, start, nil
		case bytes.HasPrefix(line, []byte("---")):
			return nil, 0, errorf(ErrSyntax, "line %d: text after the document separator \"---\" is not read; put it on the next line", d.line)
		case isMarker(line, "..."):
			// The document ends here; what follows, up to the next
			// separator, is the next document, never silently ignored.
			return buf[:lineStart], start, nil
		case line[0] == '%':
			return nil, 0, errorf(ErrSyntax, "line %d: YAML directives (%%YAML, %%TAG) are not read", d.line)
		}
	}
}

// isMarker reports whether line is the marker alone, or followed by blanks
// and a comment.
func isMarker(line []byte, marker string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(marker))
	if !ok {
		return false
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' && rest[0] != '\n' {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// utf16Reader decodes UTF-16 to UTF-8, refusing unpaired surrogates and an
// odd byte count instead of replacing them: a replaced byte would be a
// silent change to a file or a command.
type utf16Reader struct {
	r         *bufio.Reader
	bigEndian bool
	off       int64 // bytes of UTF-16 consumed, for messages
	out       []byte
	err       error
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) < len(p) && u.err == nil {
		r, err := u.unit()
		if err != nil {
			u.err = err
			break
		}
		if utf16.IsSurrogate(r) {
			if r >= 0xDC00 {
				u.err = errorf(ErrEncoding, "invalid UTF-16 at byte %d: unpaired low surrogate", u.off)
				break
			}
			lo, err := u.unit()
			if err != nil || lo < 0xDC00 || lo > 0xDFFF {
				u.err = errorf(ErrEncoding, "invalid UTF-16 at byte %d: unpaired high surrogate", u.off)
				break
			}
			r = utf16.DecodeRune(r, lo)
		}
		u.out = utf8.AppendRune(u.out, r)
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	if n == 0 && u.err != nil {
		return 0, u.err
	}
	return n, nil
}

func (u *utf16Reader) unit() (rune, error) {
	var b [2]byte
	n, err := io.ReadFull(u.r, b[:])
	u.off += int64(n)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return 0, errorf(ErrEncoding, "UTF-16 input with an odd number of bytes")
	case err != nil:
		return 0, err
	}
	if u.bigEndian {
		return rune(b[0])<<8 | rune(b[1]), nil
	}
	return rune(b[1])<<8 | rune(b[0]), nil
}
