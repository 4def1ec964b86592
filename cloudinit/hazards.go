package cloudinit

import (
	"fmt"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// inactiveExpireDate is the account expiry written for users[].inactive: true
// under corrections. cloud-init (22.4 and later) ignores a boolean inactive;
// an expiry date in the past is how useradd disables an account. Day 1 rather
// than day 0, because shadow reads an expiry of 0 as "unset" on some systems.
const inactiveExpireDate = "1970-01-02"

// hazards records which Plan elements carry a CABPK-layout hazard. A nil
// *hazards means none, so the common case costs no allocation.
type hazards struct {
	files, commands, boot map[int]bool
}

func (h *hazards) fileJinja(i int) bool    { return h != nil && h.files[i] }
func (h *hazards) commandJinja(i int) bool { return h != nil && h.commands[i] }
func (h *hazards) bootJinja(i int) bool    { return h != nil && h.boot[i] }

func mark(m *map[int]bool, i int) {
	if *m == nil {
		*m = map[int]bool{}
	}
	(*m)[i] = true
}

// findHazards reports, as warnings, every construct in the CABPK layout that
// cloud-init will reject or misread, and returns where they are.
func findHazards(p *provisioning.Plan, ps *provisioning.Problems) *hazards {
	var h *hazards
	get := func() *hazards {
		if h == nil {
			h = &hazards{}
		}
		return h
	}
	for i := range p.Files {
		f := &p.Files[i]
		if f.Encoding != provisioning.EncodingNone {
			continue
		}
		if bad := jinjaHazard(f.Content); bad != "" {
			ps.Warnf(provisioning.FieldPath(f.Origin, fmt.Sprintf("files[%d]", i), "content"),
				"%s; under the '## template: jinja' header cloud-init then fails and runs none of the user data (corrections write it base64-encoded)", bad)
			mark(&get().files, i)
		}
	}
	for i := range p.Commands {
		c := &p.Commands[i]
		if c.Phase == provisioning.PhaseBootstrap {
			continue
		}
		if bad := jinjaHazard(c.Script); bad != "" {
			ps.Warnf(provisioning.FieldPath(c.Origin, fmt.Sprintf("commands[%d]", i), ""),
				"%s; under the '## template: jinja' header cloud-init then fails and runs none of the user data (corrections wrap it in a jinja raw block)", bad)
			mark(&get().commands, i)
		}
	}
	for i, c := range p.BootCommands {
		if bad := jinjaHazard(c); bad != "" {
			ps.Warnf(fmt.Sprintf("bootCommands[%d]", i),
				"%s; under the '## template: jinja' header cloud-init then fails and runs none of the user data (corrections wrap it in a jinja raw block)", bad)
			mark(&get().boot, i)
		}
	}
	for i, m := range p.Mounts {
		for j, v := range m {
			if !plainString(v) {
				ps.Warnf(fmt.Sprintf("mounts[%d][%d]", i, j),
					"%q is written unquoted, so YAML reads it as a %s where cloud-init's schema wants a string (corrections quote it)", v, yamlKind(v))
			}
		}
	}
	for i := range p.Users {
		u := &p.Users[i]
		if u.Inactive != nil {
			ps.Warnf(provisioning.FieldPath(u.Origin, fmt.Sprintf("users[%d]", i), "inactive"),
				"is written as a boolean, which cloud-init ignores (it wants a number of days); corrections express inactive: true as an expiry date in the past")
		}
	}
	if p.Disks != nil {
		for i := range p.Disks.Partitions {
			pt := &p.Disks.Partitions[i]
			if pt.Layout == nil && len(pt.DiskLayout) == 0 {
				ps.Warnf(fmt.Sprintf("disks.partitions[%d].layout", i),
					"is unset and written as '<nil>', which cloud-init's schema rejects (corrections write false)")
			}
		}
	}
	return h
}

// jinjaRoots are the top-level names of cloud-init's instance data that a
// '## template: jinja' document may use; anything else is undefined.
var jinjaRoots = map[string]bool{"ds": true, "v1": true, "v2": true, "merged_cfg": true, "sys_info": true}

// jinjaHazard returns why s would break or be changed by cloud-init's jinja
// rendering, or "" when it is safe. References to instance data such as
// {{ ds.meta_data.local_hostname }} are intended and safe.
func jinjaHazard(s string) string {
	for i := 0; i+1 < len(s); i++ {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 || i+j+1 >= len(s) {
			return ""
		}
		i += j
		switch s[i+1] {
		case '%':
			return "contains a jinja statement '{%'"
		case '#':
			return "contains a jinja comment '{#'"
		case '{':
			end := strings.Index(s[i+2:], "}}")
			if end < 0 {
				return "contains an unterminated jinja expression '{{'"
			}
			expr := s[i+2 : i+2+end]
			if !instanceDataRef(expr) {
				return fmt.Sprintf("contains the jinja expression '{{%s}}', which is not cloud-init instance data", expr)
			}
			i += 2 + end + 1
		}
	}
	return ""
}

// instanceDataRef reports whether expr is "root.key.key" (optionally piped
// through filters) with a known instance-data root.
func instanceDataRef(expr string) bool {
	parts := strings.Split(expr, "|")
	ref := strings.TrimSpace(parts[0])
	segs := strings.Split(ref, ".")
	if !jinjaRoots[segs[0]] {
		return false
	}
	for _, seg := range segs {
		if !identifier(seg, true) {
			return false
		}
	}
	for _, f := range parts[1:] {
		if !identifier(strings.TrimSpace(f), false) {
			return false
		}
	}
	return true
}

func identifier(s string, dash bool) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || dash && c == '-'):
		default:
			return false
		}
	}
	return true
}

// plainSafe reports whether s can be written as a YAML plain scalar inside a
// block sequence and be read back as the same string.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") ||
		strings.ContainsAny(s, "\n\r\t") {
		return false
	}
	return true
}

// plainString reports whether s, written plain, is read back as a string
// (and not as a number, boolean or null) with the same value.
func plainString(s string) bool {
	return plainSafe(s) && yamlKind(s) == "string"
}

// yamlKind is the type a YAML 1.1 loader (PyYAML, as cloud-init uses) gives
// the plain scalar s.
func yamlKind(s string) string {
	if s == "" || s == "~" || strings.EqualFold(s, "null") {
		return "null"
	}
	for _, b := range yaml11Bools {
		if strings.EqualFold(s, b) {
			return "boolean"
		}
	}
	if isNumber(s) {
		return "number"
	}
	return "string"
}

var yaml11Bools = []string{"true", "false", "yes", "no", "on", "off", "y", "n"}

func isNumber(s string) bool {
	t := strings.TrimLeft(s, "+-")
	if t == "" {
		return false
	}
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0o") {
		t = t[2:]
		return t != "" && strings.Trim(t, "0123456789abcdefABCDEF_") == ""
	}
	dot, digits := false, false
	for i, c := range t {
		switch {
		case c >= '0' && c <= '9' || c == '_':
			digits = true
		case c == '.' && !dot:
			dot = true
		case (c == 'e' || c == 'E') && digits && i > 0:
			return isNumber(t[i+1:]) && !strings.Contains(t[i+1:], ".")
		default:
			return strings.EqualFold(t, ".inf") || strings.EqualFold(t, ".nan")
		}
	}
	return digits
}
