// Package shellscript prepares the shell scripts nodeboot embeds in
// bootstrap data.
package shellscript

import "strings"

// StripComments leaves out the comment lines of a script, which only its
// maintainers read, so they cost no bootstrap data bytes; the first line
// (the shebang) stays. A '#' line inside a here-document would be data: the
// scripts this is used on must not have one.
func StripComments(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, line := range strings.SplitAfter(s, "\n") {
		if t := strings.TrimLeft(line, " \t"); i > 0 && strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}
