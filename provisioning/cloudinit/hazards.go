package cloudinit

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
// cloud-init will reject or misread, and returns where the jinja ones are.
// Under corrections it reports only what the corrections cannot fix, and a
// value no YAML can carry is an error there: corrections promise the
// document means exactly what was declared.
func findHazards(p *provisioning.Plan, ps *provisioning.Problems, corrections bool) *hazards {
	var h *hazards
	get := func() *hazards {
		if h == nil {
			h = &hazards{}
		}
		return h
	}
	sc := scan{ps: ps, corrections: corrections}
	for i := range p.Files {
		f := &p.Files[i]
		pp := func(field string) provisioning.Path { return provisioning.FieldPath(f.Origin, p.FilePath(i), field) }
		if !plainFine(f.Path) {
			sc.plainAt(pp("path"), f.Path, false)
		}
		if !plainFine(f.Owner) {
			sc.plainAt(pp("owner"), f.Owner, false)
		}
		sc.quotedPermissions(func() provisioning.Path { return pp("permissions") }, f.Permissions)
		if chownClears(f.Permissions) {
			ps.Warnf(pp("permissions"), "cloud-init's write_files sets the mode before the owner, and chown clears setuid (and setgid, on a group-executable file): the file does not keep %s", f.Permissions)
		}
		// One pass over the content answers both questions for the common
		// file: is it a plain block, and can it hold jinja syntax at all.
		simple, braces := scanBlock(f.Content)
		if f.Encoding == provisioning.EncodingNone && (braces || !simple) {
			if bad := jinjaHazard(f.Content); bad != "" {
				sc.warn(pp("content"), "%s; under the '## template: jinja' header cloud-init then fails and runs none of the user data (corrections write it base64-encoded)", bad)
				mark(&get().files, i)
			}
		}
		if !simple {
			sc.content(func() provisioning.Path { return pp("content") }, f)
		}
	}
	for i := range p.Commands {
		c := &p.Commands[i]
		if c.Phase == provisioning.PhaseBootstrap {
			// CABPK writes the bootstrap line as one single-quoted scalar,
			// where YAML folds each line break into a space, and no
			// correction rewrites it: reported with corrections too.
			if strings.Contains(c.Script, "\n") {
				sc.hazard(p.CommandPath(i), false, "spans lines, and CABPK's dialect writes it as one single-quoted YAML string in which each line break becomes a space: the node runs a different command (join the lines with ';' or '&&')")
			}
			if why := bootstrapLineHazard(c.Script); why != "" {
				sc.hazard(p.CommandPath(i), false, "%s", why)
			}
			if bad := jinjaHazard(c.Script); bad != "" {
				sc.hazard(p.CommandPath(i), false, "%s; under the '## template: jinja' header cloud-init renders the bootstrap command as a template (or runs none of the user data)", bad)
			}
			continue
		}
		if bad := jinjaHazard(c.Script); bad != "" {
			sc.warn(p.CommandPath(i), "%s; under the '## template: jinja' header cloud-init then fails and runs none of the user data (corrections escape its braces)", bad)
			mark(&get().commands, i)
		}
		sc.quotedCommand(func() provisioning.Path { return p.CommandPath(i) }, c.Script)
	}
	for i, c := range p.BootCommands {
		if bad := jinjaHazard(c); bad != "" {
			sc.warn(p.SectionPath(provisioning.SectionBootCommands).Index(i), "%s; under the '## template: jinja' header cloud-init then fails and runs none of the user data (corrections escape its braces)", bad)
			mark(&get().boot, i)
		}
		sc.quotedCommand(func() provisioning.Path { return p.SectionPath(provisioning.SectionBootCommands).Index(i) }, c)
	}
	if n := p.NTP; n != nil {
		if len(n.Servers) == 0 {
			sc.warn(p.SectionPath(provisioning.SectionNTP).Field("servers"), "is empty, so 'servers:' is written without entries, which cloud-init's schema rejects (corrections leave it out)")
		}
		for i, s := range n.Servers {
			if !plainFine(s) {
				sc.plainAt(p.SectionPath(provisioning.SectionNTP).Field("servers").Index(i), s, false)
			}
			if slices.Contains(n.Servers[:i], s) {
				sc.warn(p.SectionPath(provisioning.SectionNTP).Field("servers").Index(i), "repeats an earlier server, which cloud-init's schema rejects (corrections leave the repetition out)")
			}
		}
	}
	for i := range p.Users {
		sc.user(i, &p.Users[i])
	}
	if p.Disks != nil {
		sc.disks(p, p.Disks)
	}
	for i, m := range p.Mounts {
		for j, v := range m {
			if !plainFine(v) {
				sc.plainAt(p.SectionPath(provisioning.SectionMounts).Index(i).Index(j), v, false)
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
	why, at := jinjaHazardAt(s)
	if why == "" || strings.IndexByte(s, '\n') < 0 {
		return why
	}
	// Name the line, never the text: the value may come from a Secret.
	return "line " + strconv.Itoa(1+strings.Count(s[:at], "\n")) + " " + why
}

// jinjaHazardAt is jinjaHazard with the offset of the culprit.
func jinjaHazardAt(s string) (string, int) {
	for i := 0; i+1 < len(s); i++ {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 || i+j+1 >= len(s) {
			return "", 0
		}
		i += j
		switch s[i+1] {
		case '%':
			return "contains a jinja statement '{%'", i
		case '#':
			return "contains a jinja comment '{#'", i
		case '{':
			end := strings.Index(s[i+2:], "}}")
			if end < 0 {
				return "contains an unterminated jinja expression '{{'", i
			}
			expr := s[i+2 : i+2+end]
			if !instanceDataRef(expr) {
				return "contains a jinja expression ('{{ }}') that is not cloud-init instance data", i
			}
			i += 2 + end + 1
		}
	}
	return "", 0
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
	n := len(s)
	if n == 0 || s[0] == ' ' || s[n-1] == ' ' || s[n-1] == ':' || plainIndicator[s[0]] {
		return false
	}
	for i := 0; i < n; i++ {
		switch s[i] {
		case '\n', '\r', '\t':
			return false
		case ' ':
			// s[0] is no blank, so i > 0.
			if s[i-1] == ':' {
				return false
			}
		case '#':
			if i > 0 && s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}

// yamlKind is the type PyYAML's safe loader (YAML 1.1, as cloud-init
// uses it) gives the plain scalar s, by the implicit resolvers it registers.
// Every value the layout writes plain passes through here, so the resolver
// regexes run only for the rare value that looks like a number or a date.
func yamlKind(s string) string {
	if s == "" {
		return "null"
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		// Only the YAML 1.1 booleans and nulls start with a letter, and
		// none is longer than five.
		if len(s) > 5 {
			return "string"
		}
		switch s {
		case "null", "Null", "NULL":
			return "null"
		case "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF":
			return "boolean"
		}
		return "string"
	case c == '~':
		if s == "~" {
			return "null"
		}
		return "string"
	case c == '<':
		if s == "<<" {
			return "merge key"
		}
		return "string"
	case c == '=':
		if s == "=" {
			return "value key"
		}
		return "string"
	case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.':
		return numericKind(s)
	}
	return "string"
}

// numericKind is yamlKind for s starting with a digit, a sign or a dot:
// the int, float and timestamp resolvers are the only ones that can match.
func numericKind(s string) string {
	for i := 0; i < len(s); i++ {
		if !numericByte[s[i]] {
			return "string"
		}
	}
	body := s
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	if body == "" || body[0] != '.' && (body[0] < '0' || body[0] > '9') {
		// Every int and float form has a digit or a dot after the sign,
		// and timestamps have no sign.
		return "string"
	}
	digits, octal := true, true
	for i := 0; i < len(body); i++ {
		c := body[i]
		digits = digits && c >= '0' && c <= '9'
		octal = octal && c >= '0' && c <= '7'
	}
	// [-+]?(?:0|[1-9][0-9_]*) and [-+]?0[0-7_]+, the common integers.
	if digits && (body[0] != '0' || len(body) == 1 || octal) {
		return "number"
	}
	switch {
	case yaml11Int.MatchString(s), yaml11Float.MatchString(s):
		return "number"
	case yaml11Timestamp.MatchString(s):
		return "timestamp"
	}
	return "string"
}

// numericByte marks every byte PyYAML's int, float and timestamp resolvers
// can match; a value with any other byte is none of them.
var numericByte = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF_+-.:xinINTtZ \t" {
		t[c] = true
	}
	return t
}()

// PyYAML's implicit int, float and timestamp resolvers (yaml/resolver.py),
// unchanged; its null and bool resolvers are the word lists in yamlKind.
var (
	yaml11Int       = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yaml11Float     = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yaml11Timestamp = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9])$`)
)

// bootstrapLineHazard says what in the bootstrap command YAML would not
// carry as it is in CABPK's single-quoted scalar, or "": a character
// PyYAML refuses to read (cloud-init then runs none of the user data) or
// one it reads as a line break (the node runs another command).
func bootstrapLineHazard(s string) string {
	if !utf8.ValidString(s) {
		return "is not UTF-8, which cloud-init's YAML reader refuses: it runs none of the user data"
	}
	for _, r := range s {
		switch {
		case r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
			return fmt.Sprintf("contains a line break YAML folds (U+%04X): the node runs a different command", r)
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f, r >= 0x80 && r < 0xa0, r == 0xfffe, r == 0xffff:
			return fmt.Sprintf("contains a control character (U+%04X), which cloud-init's YAML reader refuses: it runs none of the user data", r)
		}
	}
	return ""
}

// chownClears reports whether the kernel clears a bit of the octal mode
// perm when the file is chowned (Linux's should_remove_suid): setuid always,
// setgid on a group-executable file (without group execute it marks
// mandatory locking and stays); the sticky bit stays.
func chownClears(perm string) bool {
	if len(perm) != 4 || perm[0] < '0' || perm[0] > '7' || perm[2] < '0' || perm[2] > '7' {
		return false
	}
	special, group := perm[0]-'0', perm[2]-'0'
	return special&4 != 0 || special&2 != 0 && group&1 != 0
}
