package provisioning

import (
	"fmt"
	pathpkg "path"
	"strings"
)

// Validate returns every problem in the Plan, each with its field path. A Plan
// with no errors can be given to any Provisioner that supports its features.
func (p *Plan) Validate() Problems {
	var ps Problems
	switch p.Role {
	case RoleInit, RoleJoinControlPlane, RoleJoinWorker, "":
	default:
		ps.Errorf("role", "unknown role %q", p.Role)
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
			if !ptrTrue(f.Append) {
				ps.Hazardf(FieldPath(f.Origin, index("files", i), "path"), "duplicate path (also %s): the later file replaces the earlier", FieldPath(p.Files[prev].Origin, index("files", prev), ""))
			}
			continue
		}
		if seen != nil {
			seen[f.Path] = i
		}
	}
	users := make(map[string]bool, len(p.Users))
	for i, u := range p.Users {
		pp := func(field string) string { return FieldPath(u.Origin, index("users", i), field) }
		switch {
		case u.Name == "":
			ps.Errorf(pp("name"), "must not be empty")
		case strings.TrimSpace(u.Name) == "":
			ps.Hazardf(pp("name"), "must not be blank")
		case users[u.Name]:
			ps.Hazardf(pp("name"), "duplicate user name (also an earlier users entry)")
		}
		users[u.Name] = true
		if strings.ContainsAny(u.Name, " :\n\t") {
			ps.Hazardf(pp("name"), "must not contain blanks or ':'; no system can create such an account")
		}
		if strings.Contains(u.Name, "/") || u.Name == "." || u.Name == ".." {
			ps.Hazardf(pp("name"), "must not contain '/' or be '.' or '..': provisioners that write per-user files (sudoers) use the name as a path")
		}
		for j, k := range u.SSHAuthorizedKeys {
			if strings.TrimSpace(k) == "" {
				ps.Hazardf(pp(index("sshAuthorizedKeys", j)), "must not be blank")
			}
		}
	}
	if p.NTP != nil {
		for i, s := range p.NTP.Servers {
			if strings.TrimSpace(s) == "" {
				ps.Hazardf(fmt.Sprintf("ntp.servers[%d]", i), "must not be blank")
			}
		}
	}
	if p.Disks != nil {
		validateDisks(&ps, p.Disks)
	}
	for i, m := range p.Mounts {
		if len(m) < 2 {
			ps.Hazardf(fmt.Sprintf("mounts[%d]", i), "needs at least a device and a mount point")
		}
		if len(m) > 6 {
			ps.Hazardf(fmt.Sprintf("mounts[%d]", i), "has %d fields, fstab has 6", len(m))
		}
	}
	bootstrap := 0
	for i, c := range p.Commands {
		if c.Phase < PhasePre || c.Phase > PhasePost {
			ps.Errorf(FieldPath(c.Origin, index("commands", i), ""), "unknown phase %d", c.Phase)
		}
		if c.Phase == PhaseBootstrap {
			bootstrap++
			if bootstrap > 1 {
				ps.Errorf(FieldPath(c.Origin, index("commands", i), ""), "a plan has at most one bootstrap command")
			}
		}
	}
	if p.Sentinel != "" && !pathpkg.IsAbs(p.Sentinel) {
		ps.Errorf("sentinel", "must be absolute")
	}
	return ps
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
	for j := range earlier {
		if earlier[j].Path == path {
			return j, true
		}
	}
	return 0, false
}

func index(list string, i int) string { return fmt.Sprintf("%s[%d]", list, i) }

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
	if strings.ContainsAny(f.Owner, "\n\r ") {
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

func validateDisks(ps *Problems, d *DiskSetup) {
	for i, part := range d.Partitions {
		// Formatted only for a problem: Validate runs on every render.
		pp := func() string { return index("disks.partitions", i) }
		if part.Device == "" {
			ps.Errorf(pp()+".device", "must not be empty")
		}
		switch part.TableType {
		case "", "mbr", "gpt":
		default:
			ps.Errorf(pp()+".tableType", "must be mbr or gpt")
		}
		total := int32(0)
		for j, s := range part.DiskLayout {
			if s.Percentage < 0 || s.Percentage > 100 {
				ps.Errorf(fmt.Sprintf("%s.diskLayout[%d].percentage", pp(), j), "must be between 0 and 100")
			}
			total += s.Percentage
		}
		if total > 100 {
			ps.Errorf(pp()+".diskLayout", "percentages add up to %d, more than 100", total)
		}
	}
	for i, fs := range d.Filesystems {
		pp := func() string { return index("disks.filesystems", i) }
		if fs.Device == "" {
			ps.Errorf(pp()+".device", "must not be empty")
		}
		if fs.Filesystem == "" {
			ps.Errorf(pp()+".filesystem", "must not be empty")
		}
	}
}

// fileOK is the allocation-free fast path of validateFile for valid files.
func fileOK(f *File) bool {
	return pathpkg.IsAbs(f.Path) && !strings.HasSuffix(f.Path, "/") && pathpkg.Clean(f.Path) == f.Path &&
		!strings.ContainsAny(f.Path, "\n\r\x00") && (f.Permissions == "" || validMode(f.Permissions)) &&
		knownEncoding(f.Encoding) && !strings.ContainsAny(f.Owner, "\n\r ")
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
