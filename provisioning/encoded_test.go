package provisioning

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func gz(t *testing.T, data []byte, repeat int) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	for range repeat {
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCorruptEncodedContent: content that does not decode as its encoding
// says is a hazard at files[i].content; what decodes is not, and a
// decompression bomb is checked only up to the bound.
func TestCorruptEncodedContent(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	hello := gz(t, []byte("hello"), 1)
	badCRC := []byte(hello)
	badCRC[len(badCRC)-6] ^= 0xff
	bomb := gz(t, make([]byte, 1<<20), maxVerifiedGzip>>20+1)
	for _, tc := range []struct {
		name    string
		enc     Encoding
		content string
		hazard  string
	}{
		{"base64", EncodingBase64, b64([]byte("hello")), ""},
		{"base64 wrapped", EncodingBase64, "aGVs\nbG8g\r\nd29y bGQ=\n", ""},
		{"base64 garbage", EncodingBase64, "not base64!", "is not valid base64"},
		{"base64 unpadded", EncodingBase64, "aGVsbG8", "is not valid base64"},
		{"gzip", EncodingGzip, hello, ""},
		{"gzip plain text", EncodingGzip, "hello", "is not a valid gzip stream"},
		{"gzip truncated", EncodingGzip, hello[:len(hello)-4], "is not a valid gzip stream"},
		{"gzip bad checksum", EncodingGzip, string(badCRC), "is not a valid gzip stream"},
		{"gzip bomb past the bound", EncodingGzip, bomb, ""},
		{"gzip+base64", EncodingGzipBase64, b64([]byte(hello)), ""},
		{"gzip+base64 not base64", EncodingGzipBase64, "%%%", "is not valid base64"},
		{"gzip+base64 not gzip", EncodingGzipBase64, b64([]byte("hello")), "decodes from base64 but is not a valid gzip stream"},
		{"none", EncodingNone, "anything %%%", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Files: []File{{Path: "/etc/x", Encoding: tc.enc, Content: tc.content, Origin: NewPath("spec", "files").Index(3).WithFields()}}}
			start := time.Now()
			ps := p.Validate()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
			var got *Problem
			for i := range ps {
				if ps[i].Path.Equal(NewPath("spec", "files").Index(3).Field("content")) {
					got = &ps[i]
				}
			}
			switch {
			case tc.hazard == "" && got != nil:
				t.Fatalf("unexpected %v", got)
			case tc.hazard != "" && (got == nil || !got.Hazard || !strings.Contains(got.Message, tc.hazard)):
				t.Fatalf("want a hazard %q, got %v", tc.hazard, ps)
			case got != nil && strings.Contains(got.Message, tc.content):
				t.Fatalf("the message quotes the content: %s", got.Message)
			}
		})
	}
}
