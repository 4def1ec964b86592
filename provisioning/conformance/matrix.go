package conformance

import (
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Target is a format in one version (Options.Version).
type Target struct {
	Format, Version string
}

func (t Target) String() string {
	if t.Version == "" {
		return t.Format
	}
	return t.Format + " " + t.Version
}

// SupportMatrix is the Markdown table of provisioning.Capabilities for
// targets: a row per Element, a column per target, "yes" or "no"
// (ErrUnsupported naming the field).
func SupportMatrix(targets []Target) (string, error) {
	var b strings.Builder
	b.WriteString("| element |")
	for _, t := range targets {
		b.WriteString(" " + t.String() + " |")
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(targets)))
	b.WriteString("\n")
	support := make([]provisioning.Support, len(targets))
	for i, t := range targets {
		s, err := provisioning.Capabilities(t.Format, t.Version)
		if err != nil {
			return "", err
		}
		support[i] = s
	}
	for _, e := range provisioning.Elements {
		b.WriteString("| `" + string(e) + "` |")
		for _, s := range support {
			if s.Supports(e) {
				b.WriteString(" yes |")
			} else {
				b.WriteString(" no |")
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
