package redact

import (
	"fmt"
	"regexp"
	"strings"
)

// compiled is a class ready for Go.
type compiled struct {
	re, end, rest *regexp.Regexp
	with          string
	hints         []string
}

var compiledClasses = compileAll()

func compileAll() []compiled {
	out := make([]compiled, 0, len(classes))
	for _, c := range classes {
		x, err := compileClass(c)
		if err != nil {
			panic(err)
		}
		out = append(out, x)
	}
	return out
}

// compileClass compiles c with sed's semantics: POSIX ERE syntax,
// leftmost-longest matching.
func compileClass(c Class) (compiled, error) {
	if _, err := regexp.CompilePOSIX(c.Pattern); err != nil {
		return compiled{}, fmt.Errorf("class %s: not POSIX ERE: %w", c.Name, err)
	}
	compile := func(p string) (*regexp.Regexp, error) {
		if c.Fold {
			p = "(?i)" + p
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("class %s: %w", c.Name, err)
		}
		re.Longest()
		return re, nil
	}
	x := compiled{hints: c.Hints}
	var err error
	if x.re, err = compile(c.Pattern); err != nil {
		return x, err
	}
	if c.End != "" {
		if _, err := regexp.CompilePOSIX(c.End); err != nil {
			return x, fmt.Errorf("class %s: end not POSIX ERE: %w", c.Name, err)
		}
		if x.end, err = compile(c.End); err != nil {
			return x, err
		}
		if x.rest, err = compile("(" + c.Pattern + ").*"); err != nil {
			return x, err
		}
	}
	// Go's replacement syntax: ${1} for \1, $$ for $.
	x.with = strings.NewReplacer("$", "$$", `\1`, "${1}", `\2`, "${2}").Replace(c.Replace)
	return x, nil
}

// Lines redacts text as the node's sed program does, line by line, and
// returns its lines that are not blank: a blank line says nothing, and a
// tail of them must not push out the line that says why a step failed.
func Lines(text string) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	// inBlock[i]: class i's block is open.
	inBlock := make([]bool, len(compiledClasses))
lines:
	for _, l := range lines {
		// lower is l in ASCII lower case, for the hints; empty until needed
		// and after l changed.
		lower := ""
		for i, c := range compiledClasses {
			if c.end == nil {
				if len(c.hints) > 0 {
					if lower == "" {
						lower = strings.ToLower(l)
					}
					if !containsAny(lower, c.hints) {
						continue
					}
				}
				if r := c.re.ReplaceAllString(l, c.with); r != l {
					l, lower = r, ""
				}
				continue
			}
			// A sed range: it begins at a line matching the pattern and
			// ends at the next line (not the same one) matching the end.
			inRange := inBlock[i]
			if inBlock[i] {
				inBlock[i] = !c.end.MatchString(l)
			} else if c.re.MatchString(l) {
				inBlock[i], inRange = true, true
			}
			if inRange {
				if !c.re.MatchString(l) {
					continue lines
				}
				l = c.rest.ReplaceAllString(l, c.with)
			}
		}
		// sed's [[:space:]] in the C locale.
		if strings.Trim(l, " \t\v\f\r") != "" {
			out = append(out, l)
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Text is Lines joined with newlines.
func Text(text string) string { return strings.Join(Lines(text), "\n") }
