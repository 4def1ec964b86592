package provisioning

import (
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

// errStillIntact ends a bounded gzip check that found nothing wrong.
var errStillIntact = errors.New("intact so far")

// validateEncoded reports content that does not decode as its encoding says.
// CABPK writes it as it is and the node then writes no file, or other bytes
// than meant; it is a hazard, so CABPK's dialects warn and render.
func validateEncoded(ps *Problems, f *File, i int) {
	var why string
	switch f.Encoding {
	case EncodingBase64:
		if _, err := decodeBase64(f.Content); err != nil {
			why = "is not valid base64 (line breaks and blanks aside)"
		}
	case EncodingGzip:
		if err := checkGzip(f.Content); err != nil {
			why = "is not a valid gzip stream"
		}
	case EncodingGzipBase64:
		raw, err := decodeBase64(f.Content)
		switch {
		case err != nil:
			why = "is not valid base64 (line breaks and blanks aside)"
		case checkGzip(string(raw)) != nil:
			why = "decodes from base64 but is not a valid gzip stream"
		}
	default:
		return
	}
	if why != "" {
		ps.Hazardf(FieldPath(f.Origin, index("files", i), "content"), "%s for encoding %s: the node gets no file or different bytes", why, f.Encoding)
	}
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	return base64.StdEncoding.DecodeString(s)
}

// checkGzip reads the whole stream, trailer and checksum included, up to
// maxVerifiedGzip decompressed bytes.
func checkGzip(s string) error {
	// Validate runs on every render: a fresh reader and copy buffer are
	// ~100 KB, far more than checking a typical small stream costs.
	g, _ := gzipChecks.Get().(*gzipCheck)
	if g == nil {
		g = &gzipCheck{}
	}
	defer gzipChecks.Put(g)
	var err error
	if g.zr == nil {
		g.zr, err = gzip.NewReader(strings.NewReader(s))
	} else {
		err = g.zr.Reset(strings.NewReader(s))
	}
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(&limitWriter{n: maxVerifiedGzip}, g.zr, g.buf[:])
	if errors.Is(err, errStillIntact) {
		return nil
	}
	return err
}

// gzipCheck is checkGzip's reusable state.
type gzipCheck struct {
	zr  *gzip.Reader
	buf [4096]byte
}

var gzipChecks sync.Pool

type limitWriter struct{ n int }

func (w *limitWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errStillIntact
	}
	w.n -= len(p)
	return len(p), nil
}
