package redact

import (
	"fmt"
	"strings"
)

// delimiters are tried in order for each s command: the first that appears
// in neither the pattern nor the replacement is used, so no pattern needs
// escaping for sed.
const delimiters = "/|#%,;!~@"

// Sed returns the classes as a sed program for sed -E, one command a line,
// ending with the deletion of blank lines. Run it with LC_ALL=C: in a UTF-8
// locale a byte that is not UTF-8 stops a match and could leave the rest of
// a secret.
func Sed() string { return sedProgram }

var sedProgram = func() string {
	p, err := renderSed(classes)
	if err != nil {
		panic(err)
	}
	return p
}()

func renderSed(cs []Class) (string, error) {
	var b strings.Builder
	for _, c := range cs {
		if c.End != "" {
			if c.Fold || strings.Contains(c.Pattern, "/") || strings.Contains(c.End, "/") {
				return "", fmt.Errorf("class %s: a block class matches case-sensitively and without '/'", c.Name)
			}
			rest, err := subst("("+c.Pattern+").*", c.Replace, "")
			if err != nil {
				return "", fmt.Errorf("class %s: %w", c.Name, err)
			}
			// Indented, so that no line of the program is a lone "}" (the
			// end of a shell function, to a reader of the script).
			fmt.Fprintf(&b, "/%s/,/%s/{\n /%s/!d\n %s\n }\n", c.Pattern, c.End, c.Pattern, rest)
			continue
		}
		flags := "g"
		if c.Fold {
			flags += "I"
		}
		s, err := subst(c.Pattern, c.Replace, flags)
		if err != nil {
			return "", fmt.Errorf("class %s: %w", c.Name, err)
		}
		b.WriteString(s + "\n")
	}
	b.WriteString("/^[[:space:]]*$/d\n")
	return b.String(), nil
}

func subst(pattern, replace, flags string) (string, error) {
	if strings.ContainsAny(replace, "&\n") || strings.Contains(strings.NewReplacer(`\1`, "", `\2`, "").Replace(replace), `\`) {
		return "", fmt.Errorf("replacement %q: only \\1 and \\2 may be special", replace)
	}
	for _, d := range delimiters {
		if !strings.ContainsRune(pattern, d) && !strings.ContainsRune(replace, d) {
			return fmt.Sprintf("s%c%s%c%s%c%s", d, pattern, d, replace, d, flags), nil
		}
	}
	return "", fmt.Errorf("pattern %q: no free delimiter", pattern)
}
