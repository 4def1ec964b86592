package legacy

import (
	"path"
	"strings"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// Ignition 2.3 validates unit contents with go-systemd's unit.Deserialize,
// which lexes in a goroutine of its own through a 4 KiB bufio.Reader: most
// of a unit check's cost for a few lines of text. quickUnit reads the
// ordinary layout of a unit file (section headers, key=value lines,
// comments and blank lines) as that lexer does and declines everything
// else, which then goes to the real validator; TestQuickUnitMatchesSystemd
// and FuzzQuickUnit compare the two.

// quickUnitMax keeps quickUnit below the lexer's line-length check, which
// looks at its buffer only once 2048 bytes are buffered.
const quickUnitMax = 2047

// quickUnit reports, for contents the lexer parses without an error,
// whether it yields any option and whether one is in [Install]; ok=false
// when quickUnit cannot tell.
func quickUnit(contents string) (opts, install, ok bool) {
	if len(contents) > quickUnitMax {
		return false, false, false
	}
	section := ""
	inSection := false
	for len(contents) > 0 {
		line := contents
		if i := strings.IndexByte(contents, '\n'); i >= 0 {
			line, contents = contents[:i], contents[i+1:]
		} else {
			contents = ""
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; (c < 0x20 && c != '\t') || c > 0x7e {
				return false, false, false
			}
		}
		switch {
		case strings.Trim(line, " \t") == "":
		case line[0] == '#' || line[0] == ';':
			// The lexer continues a comment line that ends in a backslash.
			if strings.IndexByte(line, '\\') >= 0 {
				return false, false, false
			}
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 || strings.Trim(line[end+1:], " \t") != "" {
				return false, false, false
			}
			section, inSection = line[1:end], true
		case line[0] == ' ' || line[0] == '\t' || !inSection:
			// An indented line, or text before the first section, is read
			// character by character: left to the lexer.
			return false, false, false
		default:
			if strings.IndexByte(line, '=') < 0 || strings.HasSuffix(line, "\\") {
				return false, false, false
			}
			opts = true
			install = install || section == "Install"
		}
	}
	return opts, install, true
}

// unitContentsClean reports whether u.ValidateContents reports nothing.
func unitContentsClean(u *ign23types.Unit) bool {
	if clean, known := quickUnitClean(u); known {
		return clean
	}
	return len(u.ValidateContents().Entries) == 0
}

// quickUnitClean is unitContentsClean without the real validator;
// known=false when it would be needed.
func quickUnitClean(u *ign23types.Unit) (clean, known bool) {
	opts, install, ok := quickUnit(u.Contents)
	if !ok {
		return false, false
	}
	// validations.ValidateInstallSection warns about an enabled unit with
	// contents and options but no option in [Install].
	enabled := u.Enable || (u.Enabled != nil && *u.Enabled)
	return !enabled || u.Contents == "" || !opts || install, true
}

// dropinClean reports whether d.Validate reports nothing.
func dropinClean(d *ign23types.SystemdDropin) bool {
	if clean, known := quickDropinClean(d); known {
		return clean
	}
	return len(d.Validate().Entries) == 0
}

// quickDropinClean is dropinClean without the real validator; known=false
// when it would be needed.
func quickDropinClean(d *ign23types.SystemdDropin) (clean, known bool) {
	if _, _, ok := quickUnit(d.Contents); !ok {
		return false, false
	}
	return path.Ext(d.Name) == ".conf", true
}
