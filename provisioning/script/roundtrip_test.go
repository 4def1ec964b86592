package script_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// A sh-free reader of the scripts this package writes: it recovers the
// words of each nb_file and nb_run call and the here-document bodies the way
// a POSIX shell reads them (single quotes, backslash outside quotes, quoted
// here-document delimiters), so tests and the fuzzer can check that every
// path, content and command reaches the shell exactly, without starting one.

type step struct {
	words []string
	body  string // nb_file's stdin, decoded
}

// parseSteps returns the nb_file and nb_run calls of script, in order.
func parseSteps(script string) ([]step, error) {
	var out []step
	for pos := 0; pos < len(script); {
		line := script[pos:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if !strings.HasPrefix(line, "nb_file ") && !strings.HasPrefix(line, "nb_run ") {
			pos += len(line) + 1
			continue
		}
		words, redirect, n, err := readWords(script[pos:])
		if err != nil {
			return nil, fmt.Errorf("at byte %d: %w", pos, err)
		}
		pos += n
		s := step{words: words}
		if words[0] == "nb_file" {
			if len(words) != 5 {
				return nil, fmt.Errorf("nb_file with %d words", len(words))
			}
			var body string
			switch {
			case redirect == "</dev/null":
			case strings.HasPrefix(redirect, "<<'") && strings.HasSuffix(redirect, "'"):
				delim := redirect[3 : len(redirect)-1]
				end := strings.Index("\n"+script[pos:], "\n"+delim+"\n")
				if end < 0 {
					return nil, fmt.Errorf("here-document %s does not end", delim)
				}
				body = script[pos : pos+end]
				pos += end + len(delim) + 1
			default:
				return nil, fmt.Errorf("nb_file without stdin: %q", redirect)
			}
			if s.body, err = decodeBody(words[4], body); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// readWords reads shell words up to the end of the line, returning a
// trailing redirection separately and how many bytes (newline included)
// it consumed.
func readWords(s string) (words []string, redirect string, n int, err error) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			flush()
			return words, redirect, i + 1, nil
		case c == ' ':
			flush()
		case c == '<' && !inWord:
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				return nil, "", 0, fmt.Errorf("redirection without newline")
			}
			redirect = s[i : i+end]
			flush()
			return words, redirect, i + end + 1, nil
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, "", 0, fmt.Errorf("unterminated single quote")
			}
			w.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '\\':
			if i+1 == len(s) {
				return nil, "", 0, fmt.Errorf("backslash at the end")
			}
			w.WriteByte(s[i+1])
			inWord = true
			i++
		case strings.IndexByte("\"$`;&|()*?[]#~", c) >= 0:
			return nil, "", 0, fmt.Errorf("unquoted %q would be interpreted by the shell", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	return nil, "", 0, fmt.Errorf("no newline after the words")
}

func decodeBody(kind, body string) (string, error) {
	switch kind {
	case "text":
		return body, nil
	case "base64", "gzip":
		raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(body, "\n", ""))
		if err != nil || kind == "base64" {
			return string(raw), err
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return "", err
		}
		data, err := io.ReadAll(zr)
		return string(data), err
	}
	return "", fmt.Errorf("unknown kind %q", kind)
}
