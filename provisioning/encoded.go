package provisioning

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"sync"
)

// maxVerifiedGzip bounds how much of a gzip stream Validate decompresses to
// check it: a stream that is still intact after this many bytes is given
// the benefit of the doubt rather than costing more memory and time.
const maxVerifiedGzip = 64 << 20

// maxPooledScratch is the largest base64 scratch space kept for the next
// Validate: a rare huge file should not pin its size in memory.
const maxPooledScratch = 1 << 20

// validateEncoded reports content that does not decode as its encoding says.
// CABPK writes it as it is and the node then writes no file, or other bytes
// than meant; it is a hazard, so CABPK's dialects warn and render.
func validateEncoded(ps *Problems, f *File, i int) {
	switch f.Encoding {
	case EncodingBase64, EncodingGzip, EncodingGzipBase64:
	default:
		return
	}
	// Validate runs on every render: the scratch space, readers and copy
	// buffer are reused rather than allocated per file.
	c, _ := encodedChecks.Get().(*encodedCheck)
	if c == nil {
		c = &encodedCheck{}
	}
	why := c.problem(f)
	c.release()
	encodedChecks.Put(c)
	if why != "" {
		ps.Hazardf(FieldPath(f.Origin, index("files", i), "content"), "%s for encoding %s: the node gets no file or different bytes", why, f.Encoding)
	}
}

// problem is why f's content does not decode, or "".
func (c *encodedCheck) problem(f *File) string {
	switch f.Encoding {
	case EncodingBase64:
		if _, err := c.decodeBase64(f.Content); err != nil {
			return "is not valid base64 (line breaks and blanks aside)"
		}
	case EncodingGzip:
		c.sr.Reset(f.Content)
		if c.checkGzip(&c.sr) != nil {
			return "is not a valid gzip stream"
		}
	case EncodingGzipBase64:
		raw, err := c.decodeBase64(f.Content)
		if err != nil {
			return "is not valid base64 (line breaks and blanks aside)"
		}
		c.br.Reset(raw)
		if c.checkGzip(&c.br) != nil {
			return "decodes from base64 but is not a valid gzip stream"
		}
	}
	return ""
}

// encodedCheck is validateEncoded's reusable state.
type encodedCheck struct {
	zr *gzip.Reader
	sr strings.Reader
	br bytes.Reader
	// text is base64 content without blanks and line breaks; raw is what
	// it decodes to.
	text, raw []byte
	buf       [4096]byte
}

// release drops references to the content just checked, and scratch
// space too large to keep.
func (c *encodedCheck) release() {
	c.sr.Reset("")
	c.br.Reset(nil)
	if cap(c.text) > maxPooledScratch {
		c.text, c.raw = nil, nil
	}
}

var encodedChecks sync.Pool

// decodeBase64 decodes s as standard, padded base64 with its blanks and
// line breaks (' ', '\t', '\n', '\r') removed first. The result is valid
// until the next call.
func (c *encodedCheck) decodeBase64(s string) ([]byte, error) {
	// Copied whole, then compacted in place only from the first blank or
	// line break on: most content has none.
	text := append(c.text[:0], s...)
	if i := blankAt(text); i >= 0 {
		n := i
		for _, b := range text[i+1:] {
			switch b {
			case ' ', '\t', '\n', '\r':
			default:
				text[n] = b
				n++
			}
		}
		text = text[:n]
	}
	c.text = text
	if n := base64.StdEncoding.DecodedLen(len(text)); cap(c.raw) < n {
		c.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(c.raw[:cap(c.raw)], text)
	return c.raw[:n], err
}

// blankAt is the index of the first blank or line break in b, or -1.
func blankAt(b []byte) int {
	for i, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			return i
		}
	}
	return -1
}

// checkGzip reads the whole stream, trailer and checksum included, up to
// maxVerifiedGzip decompressed bytes.
func (c *encodedCheck) checkGzip(r io.Reader) error {
	var err error
	if c.zr == nil {
		c.zr, err = gzip.NewReader(r)
	} else {
		err = c.zr.Reset(r)
	}
	if err != nil {
		return err
	}
	left := maxVerifiedGzip
	for {
		n, err := c.zr.Read(c.buf[:])
		if left -= n; left < 0 {
			return nil
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}
