package provisioning

import (
	"fmt"
	"path"
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
	seen := map[string]string{}
	for i, f := range p.Files {
		pp := fmt.Sprintf("files[%d]", i)
		validateFile(&ps, f, pp)
		if f.Path == "" {
			continue
		}
		if prev, dup := seen[f.Path]; dup && !ptrTrue(f.Append) {
			ps.Errorf(at(f.Origin, pp, "path"), "duplicate path %q (also %s)", f.Path, prev)
		}
		if _, dup := seen[f.Path]; !dup {
			seen[f.Path] = at(f.Origin, pp, "")
		}
	}
	users := map[string]bool{}
	for i, u := range p.Users {
		pp := fmt.Sprintf("users[%d]", i)
		switch {
		case strings.TrimSpace(u.Name) == "":
			ps.Errorf(at(u.Origin, pp, "name"), "must not be empty")
		case users[u.Name]:
			ps.Errorf(at(u.Origin, pp, "name"), "duplicate user %q", u.Name)
		}
		users[u.Name] = true
		if strings.ContainsAny(u.Name, " :\n\t") {
			ps.Errorf(at(u.Origin, pp, "name"), "must not contain blanks or ':'")
		}
		for j, k := range u.SSHAuthorizedKeys {
			if strings.TrimSpace(k) == "" {
				ps.Errorf(at(u.Origin, pp, fmt.Sprintf("sshAuthorizedKeys[%d]", j)), "must not be empty")
			}
		}
	}
	if p.NTP != nil {
		for i, s := range p.NTP.Servers {
			if strings.TrimSpace(s) == "" {
				ps.Errorf(fmt.Sprintf("ntp.servers[%d]", i), "must not be empty")
			}
		}
	}
	if p.Disks != nil {
		validateDisks(&ps, p.Disks)
	}
	for i, m := range p.Mounts {
		if len(m) < 2 {
			ps.Errorf(fmt.Sprintf("mounts[%d]", i), "needs at least a device and a mount point")
		}
		if len(m) > 6 {
			ps.Errorf(fmt.Sprintf("mounts[%d]", i), "has %d fields, fstab has 6", len(m))
		}
	}
	bootstrap := 0
	for i, c := range p.Commands {
		pp := fmt.Sprintf("commands[%d]", i)
		if c.Phase < PhasePre || c.Phase > PhasePost {
			ps.Errorf(at(c.Origin, pp, ""), "unknown phase %d", c.Phase)
		}
		if c.Phase == PhaseBootstrap {
			bootstrap++
			if bootstrap > 1 {
				ps.Errorf(at(c.Origin, pp, ""), "a plan has at most one bootstrap command")
			}
		}
	}
	if p.Sentinel != "" && !path.IsAbs(p.Sentinel) {
		ps.Errorf("sentinel", "must be absolute")
	}
	return ps
}

func validateFile(ps *Problems, f File, pp string) {
	switch {
	case f.Path == "":
		ps.Errorf(at(f.Origin, pp, "path"), "must not be empty")
	case !path.IsAbs(f.Path):
		ps.Errorf(at(f.Origin, pp, "path"), "must be absolute")
	case strings.HasSuffix(f.Path, "/"):
		ps.Errorf(at(f.Origin, pp, "path"), "must name a file, not a directory")
	case path.Clean(f.Path) != f.Path:
		ps.Errorf(at(f.Origin, pp, "path"), "must be clean (no '..', '//' or '.')")
	case strings.ContainsAny(f.Path, "\n\x00"):
		ps.Errorf(at(f.Origin, pp, "path"), "must not contain newlines or NUL")
	}
	if f.Permissions != "" && !validMode(f.Permissions) {
		ps.Errorf(at(f.Origin, pp, "permissions"), "must be an octal mode such as 0640, got %q", f.Permissions)
	}
	if !knownEncoding(f.Encoding) {
		ps.Errorf(at(f.Origin, pp, "encoding"), "unknown encoding %q (want one of base64, gzip, gzip+base64)", f.Encoding)
	}
	if strings.ContainsAny(f.Owner, "\n ") {
		ps.Errorf(at(f.Origin, pp, "owner"), "must be user or user:group")
	}
}

func validateDisks(ps *Problems, d *DiskSetup) {
	for i, part := range d.Partitions {
		pp := fmt.Sprintf("disks.partitions[%d]", i)
		if part.Device == "" {
			ps.Errorf(pp+".device", "must not be empty")
		}
		switch part.TableType {
		case "", "mbr", "gpt":
		default:
			ps.Errorf(pp+".tableType", "must be mbr or gpt, got %q", part.TableType)
		}
		total := int32(0)
		for j, s := range part.DiskLayout {
			if s.Percentage < 0 || s.Percentage > 100 {
				ps.Errorf(fmt.Sprintf("%s.diskLayout[%d].percentage", pp, j), "must be between 0 and 100")
			}
			total += s.Percentage
		}
		if total > 100 {
			ps.Errorf(pp+".diskLayout", "percentages add up to %d, more than 100", total)
		}
	}
	for i, fs := range d.Filesystems {
		pp := fmt.Sprintf("disks.filesystems[%d]", i)
		if fs.Device == "" {
			ps.Errorf(pp+".device", "must not be empty")
		}
		if fs.Filesystem == "" {
			ps.Errorf(pp+".filesystem", "must not be empty")
		}
	}
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
