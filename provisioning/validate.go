package provisioning

import (
	pathpkg "path"
	"strings"
)

// Validate returns every problem in the Plan, each with its field path. A Plan
// with no errors can be given to any Provisioner that supports its features.
//
// A nil Plan has one problem, matching ErrNilPlan and ErrInvalid.
func (p *Plan) Validate() Problems {
	var ps Problems
	if p == nil {
		ps.AddError(Path{}, ErrNilPlan)
		return ps
	}
	switch p.Role {
	case RoleInit, RoleJoinControlPlane, RoleJoinWorker, "":
	default:
		ps.Errorf(NewPath("role"), "unknown role %q", p.Role)
	}
	// Paths are formatted only when a problem is found: Validate runs on
	// every render and must stay allocation-light.
	var seen map[string]int
	if len(p.Files) > smallPlan {
		seen = make(map[string]int, len(p.Files))
	}
	for i := range p.Files {
		f := &p.Files[i]
		validateFile(&ps, f, i)
		if f.Encoding != EncodingNone {
			validateEncoded(&ps, f, i)
		}
		if f.Path == "" {
			continue
		}
		if prev, dup := firstPath(seen, p.Files[:i], f.Path); dup {
			if !ptrTrue(f.Append) && !fromUnit(p, f) {
				ps.Hazardf(FieldPath(f.Origin, index("files", i), "path"), "duplicate path (also %s): the later file replaces the earlier", p.FilePath(prev))
			}
			continue
		}
		if seen != nil {
			seen[f.Path] = i
		}
	}
	// Duplicate names are found by scanning for the few users a Plan
	// usually has, as duplicate paths are, rather than by a map per render.
	var users map[string]bool
	if len(p.Users) > smallPlan {
		users = make(map[string]bool, len(p.Users))
	}
	for i := range p.Users {
		u := &p.Users[i]
		pp := func(field string) Path { return FieldPath(u.Origin, index("users", i), field) }
		switch {
		case u.Name == "":
			ps.Errorf(pp("name"), "must not be empty")
		case strings.TrimSpace(u.Name) == "":
			ps.Hazardf(pp("name"), "must not be blank")
		case seenUser(users, p.Users[:i], u.Name):
			ps.Hazardf(pp("name"), "duplicate user name (also an earlier users entry)")
		}
		if users != nil {
			users[u.Name] = true
		}
		if containsByte(u.Name, &nameBlanks) {
			ps.Hazardf(pp("name"), "must not contain blanks or ':'; no system can create such an account")
		}
		if strings.IndexByte(u.Name, '/') >= 0 || u.Name == "." || u.Name == ".." {
			ps.Hazardf(pp("name"), "must not contain '/' or be '.' or '..': provisioners that write per-user files (sudoers) use the name as a path")
		}
		for j, k := range u.SSHAuthorizedKeys {
			if blank(k) {
				ps.Hazardf(pp("sshAuthorizedKeys").Index(j), "must not be blank")
			}
		}
		validateUserFields(&ps, u, pp)
	}
	if p.NTP != nil {
		for i, s := range p.NTP.Servers {
			if blank(s) {
				ps.Hazardf(p.SectionPath(SectionNTP).Field("servers").Index(i), "must not be blank")
			} else if hasLineBreak(s) {
				ps.Hazardf(p.SectionPath(SectionNTP).Field("servers").Index(i), "must not contain line breaks")
			}
		}
	}
	if p.Disks != nil {
		validateDisks(&ps, p, p.Disks)
	}
	for i, m := range p.Mounts {
		if len(m) < 2 {
			ps.Hazardf(p.SectionPath(SectionMounts).Index(i), "needs at least a device and a mount point")
		}
		if len(m) > 6 {
			ps.Hazardf(p.SectionPath(SectionMounts).Index(i), "has %d fields, fstab has 6", len(m))
		}
		for j, v := range m {
			if hasLineBreak(v) {
				ps.Hazardf(p.SectionPath(SectionMounts).Index(i).Index(j), "must not contain line breaks: an fstab entry is one line")
			}
		}
	}
	bootstrap := 0
	for i, c := range p.Commands {
		if c.Phase < PhasePre || c.Phase > PhasePost {
			ps.Errorf(p.CommandPath(i), "unknown phase %d", c.Phase)
		}
		if c.Phase == PhaseBootstrap {
			bootstrap++
			if bootstrap > 1 {
				ps.Errorf(p.CommandPath(i), "a plan has at most one bootstrap command")
			}
		}
	}
	validateUnits(&ps, p)
	validateSentinel(&ps, p, bootstrap > 0)
	validateTemplates(&ps, p)
	validateUserData(&ps, p)
	return ps
}

// lineBreaks are what no single-line field (a path, a name, an fstab
// entry) can carry in any provisioner's format.
const lineBreaks = "\n\r"

// hasLineBreak is strings.ContainsAny(s, lineBreaks) without building a
// byte set on every call: Validate asks it of every single-line value.
func hasLineBreak(s string) bool { return containsByte(s, &lineBreakBytes) }

// byteSet marks bytes; containsByte looks for any of them.
type byteSet [256]bool

func newByteSet(chars string) (t byteSet) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

var (
	lineBreakBytes = newByteSet(lineBreaks)
	nameBlanks     = newByteSet(" :\n\t")
	ownerBlanks    = newByteSet(" \t\n\r\x00")
	sentinelBad    = newByteSet(lineBreaks + "\x00")
)

func containsByte(s string, set *byteSet) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

// blank is strings.TrimSpace(s) == "" with an ASCII fast path: a value
// whose first byte is printable ASCII other than the blank is not blank.
func blank(s string) bool {
	if s != "" && s[0] > ' ' && s[0] < 0x7f {
		return false
	}
	return strings.TrimSpace(s) == ""
}

// seenUser reports whether an earlier user has name: from seen when
// Validate built it, else by scanning earlier.
func seenUser(seen map[string]bool, earlier []User, name string) bool {
	if seen != nil {
		return seen[name]
	}
	for j := range earlier {
		if earlier[j].Name == name {
			return true
		}
	}
	return false
}

// validateSentinel makes the sentinel mean the same in every provisioner:
// an absolute, single-line path written when the bootstrap command
// succeeded. Without a bootstrap command there is no success to record,
// and provisioners used to differ (one wrote it anyway, one never did), so
// it is an error; Plans built from KubeadmConfigs always have one.
func validateSentinel(ps *Problems, p *Plan, hasBootstrap bool) {
	if p.Sentinel == "" {
		return
	}
	at := p.SectionPath(SectionSentinel)
	switch {
	case containsByte(p.Sentinel, &sentinelBad):
		ps.Errorf(at, "must not contain line breaks or NUL")
	case !pathpkg.IsAbs(p.Sentinel):
		ps.Errorf(at, "must be absolute")
	}
	if !hasBootstrap {
		ps.Errorf(at, "is set but the plan has no bootstrap command whose success it would record")
	}
}

// validateUserFields reports line breaks in the single-line fields of a
// user: every format writes them into one line (passwd, a YAML scalar, a
// useradd argument), so a line break either breaks the document or ends up
// in /etc/passwd. CABPK writes them as they are, so they are hazards.
func validateUserFields(ps *Problems, u *User, pp func(string) Path) {
	for _, f := range [...]struct{ name, v string }{
		{"gecos", u.Gecos}, {"groups", u.Groups}, {"homeDir", u.HomeDir}, {"shell", u.Shell},
		{"primaryGroup", u.PrimaryGroup},
	} {
		if hasLineBreak(f.v) {
			ps.Hazardf(pp(f.name), "must not contain line breaks")
		}
	}
}

// smallPlan is how many files a Plan may have for Validate to find
// duplicate paths by scanning rather than by building a map on every render.
const smallPlan = 32

// firstPath is the index of the first earlier file with path: from seen
// when Validate built it, else by scanning earlier.
func firstPath(seen map[string]int, earlier []File, path string) (int, bool) {
	if seen != nil {
		i, ok := seen[path]
		return i, ok
	}
	// Paths of a Plan often share their length and start
	// (/etc/kubernetes/pki/ca.crt, ca.key), rarely their last byte:
	// comparing it first saves most full comparisons.
	n := len(path)
	for j := range earlier {
		if e := earlier[j].Path; len(e) == n && (n == 0 || e[n-1] == path[n-1]) && e == path {
			return j, true
		}
	}
	return 0, false
}

func index(list string, i int) Path { return NewPath(list).Index(i) }

// fromUnit reports whether f is the file of one of p's units or drop-ins,
// as renderers without a unit module (cloud-init) desugar them, carrying
// the unit's path as Origin. What is wrong with such a file is wrong with
// the unit, and validateUnits reports it once, at the unit.
func fromUnit(p *Plan, f *File) bool {
	if len(p.Units) == 0 || f.Origin.IsZero() || !strings.HasPrefix(f.Path, UnitDir) {
		return false
	}
	for i := range p.Units {
		if f.Origin.HasPrefix(p.UnitPath(i)) {
			return true
		}
	}
	return false
}

func validateFile(ps *Problems, f *File, i int) {
	if fileOK(f) {
		return
	}
	pp := index("files", i)
	path := FieldPath(f.Origin, pp, "path")
	switch {
	case f.Path == "":
		ps.Errorf(path, "must not be empty")
	case strings.ContainsAny(f.Path, "\n\r\x00"):
		ps.Hazardf(path, "must not contain line breaks or NUL")
	case IsWindowsPath(f.Path):
	case !pathpkg.IsAbs(f.Path):
		ps.Hazardf(path, "must be absolute")
	case strings.HasSuffix(f.Path, "/"):
		ps.Hazardf(path, "must name a file, not a directory")
	case pathpkg.Clean(f.Path) != f.Path:
		ps.Hazardf(path, "must be clean (no '..', '//' or '.')")
	}
	if f.Permissions != "" && !validMode(f.Permissions) {
		ps.Hazardf(FieldPath(f.Origin, pp, "permissions"), "must be an octal mode such as 0640")
	}
	if !knownEncoding(f.Encoding) {
		ps.Errorf(FieldPath(f.Origin, pp, "encoding"), "unknown encoding (want one of base64, gzip, gzip+base64)")
	}
	if !validOwner(f.Owner) {
		ps.Hazardf(FieldPath(f.Origin, pp, "owner"), "must be user or user:group, without blanks or line breaks")
	}
}

// IsWindowsPath reports whether p is an absolute Windows path with a drive
// letter, such as C:\k\node.json or c:/k/azure.json: what Windows machine
// templates (cloudbase-init) write files to. Such a path is absolute for
// the Plan; provisioners for Linux-only systems refuse it.
func IsWindowsPath(p string) bool {
	return len(p) >= 3 && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z') && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func validateDisks(ps *Problems, p *Plan, d *DiskSetup) {
	for i, part := range d.Partitions {
		// Built only for a problem: Validate runs on every render.
		pp := func() Path { return p.SectionPath(SectionPartitions).Index(i) }
		if part.Device == "" {
			ps.Errorf(pp().Field("device"), "must not be empty")
		} else if hasLineBreak(part.Device) {
			ps.Hazardf(pp().Field("device"), "must not contain line breaks")
		}
		switch part.TableType {
		case "", "mbr", "gpt":
		default:
			ps.Errorf(pp().Field("tableType"), "must be mbr or gpt")
		}
		total := int32(0)
		for j, s := range part.DiskLayout {
			if s.Percentage < 0 || s.Percentage > 100 {
				ps.Errorf(pp().Field("diskLayout").Index(j).Field("percentage"), "must be between 0 and 100")
			}
			total += s.Percentage
		}
		if total > 100 {
			ps.Errorf(pp().Field("diskLayout"), "percentages add up to %d, more than 100", total)
		}
	}
	for i, fs := range d.Filesystems {
		pp := func() Path { return p.SectionPath(SectionFilesystems).Index(i) }
		if fs.Device == "" {
			ps.Errorf(pp().Field("device"), "must not be empty")
		}
		if fs.Filesystem == "" {
			ps.Errorf(pp().Field("filesystem"), "must not be empty")
		}
		for _, f := range [...]struct{ name, v string }{{"device", fs.Device}, {"filesystem", fs.Filesystem}, {"label", fs.Label}, {"partition", fs.Partition}} {
			if hasLineBreak(f.v) {
				ps.Hazardf(pp().Field(f.name), "must not contain line breaks")
			}
		}
	}
}

// fileOK is the allocation-free fast path of validateFile for valid files.
func fileOK(f *File) bool {
	return cleanFilePath(f.Path) && (f.Permissions == "" || validMode(f.Permissions)) &&
		knownEncoding(f.Encoding) && validOwner(f.Owner)
}

// cleanFilePath is, in one pass over p and without path.Clean's copy,
//
//	path.IsAbs(p) && !strings.HasSuffix(p, "/") && path.Clean(p) == p &&
//		!strings.ContainsAny(p, "\n\r\x00")
//
// A rooted path is its own Clean exactly when no element is empty (no
// "//", no trailing '/'), "." or "..": those are all Clean rewrites.
func cleanFilePath(p string) bool {
	n := len(p)
	if n < 2 || p[0] != '/' || p[n-1] == '/' {
		return false
	}
	for i := 0; i < n; i++ {
		switch p[i] {
		case '\n', '\r', 0:
			return false
		case '/':
			// p does not end in '/', so an element follows.
			switch {
			case p[i+1] == '/':
				return false
			case p[i+1] == '.':
				if i+2 == n || p[i+2] == '/' || p[i+2] == '.' && (i+3 == n || p[i+3] == '/') {
					return false
				}
			}
		}
	}
	return true
}

// validOwner reports whether owner is empty, user or user:group: one
// colon at most, neither part empty, no blanks or line breaks. Every
// provisioner splits it at the colon (Ignition into user and group
// fields, chown in scripts), so anything else names no account.
func validOwner(owner string) bool {
	if owner == "" {
		return true
	}
	// One pass: strings.Cut and Contains would each scan owner again.
	colon := -1
	for i := 0; i < len(owner); i++ {
		switch c := owner[i]; {
		case ownerBlanks[c]:
			return false
		case c == ':':
			if colon >= 0 {
				return false
			}
			colon = i
		}
	}
	return colon != 0 && colon != len(owner)-1
}

func validMode(m string) bool {
	if len(m) < 3 || len(m) > 4 {
		return false
	}
	for _, c := range m {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}

func knownEncoding(e Encoding) bool {
	for _, k := range Encodings {
		if e == k {
			return true
		}
	}
	return false
}

func ptrTrue(b *bool) bool { return b != nil && *b }
