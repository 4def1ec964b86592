package conformance

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// FromPlan is the Case of a Plan that is not written for this package, such
// as a provider's own: its Uses and Want come from the Plan itself (Uses,
// Expect), so the provider states no expectation by hand. plan must return
// a new Plan each call. The Case's Plan is plan's, instrumented: each
// command logs a line to LogFile when it ends (Instrument), so the State
// can require the commands in order and the enabled units started after
// the pre commands. The Plan's commands must all succeed on the node the
// runner gives them (a command that fetches something needs a stand-in).
func FromPlan(name string, plan func() *provisioning.Plan) Case {
	p := plan()
	return Case{
		Name: name,
		Plan: func() *provisioning.Plan { return Instrument(plan()) },
		Uses: Uses(p),
		Want: Expect(p),
	}
}

// Done is the line Instrument has Commands[i] log when it ends.
func Done(p *provisioning.Plan, i int) string {
	return p.Commands[i].Phase.String() + " commands[" + strconv.Itoa(i) + "] done"
}

// Instrument returns a copy of p in which each command runs its script in a
// subshell and then logs Done: an "exit" in the script still ends only that
// command, as the Plan means, and a failing script logs nothing, since its
// shell stops at the subshell (-e). A one-line script stays on one line,
// so the instrumented Plan has a multi-line command only where p has one.
func Instrument(p *provisioning.Plan) *provisioning.Plan {
	q := *p
	q.Commands = make([]provisioning.Command, len(p.Commands))
	for i, c := range p.Commands {
		if strings.ContainsAny(c.Script, "\n#") {
			c.Script = "(\n" + c.Script + "\n)\n" + log(Done(p, i))
		} else {
			c.Script = "(" + c.Script + "); " + log(Done(p, i))
		}
		q.Commands[i] = c
	}
	return &q
}

// Uses lists the Elements p uses, in Elements' order.
func Uses(p *provisioning.Plan) []provisioning.Element {
	used := map[provisioning.Element]bool{
		provisioning.ElementFiles:        len(p.Files) > 0,
		provisioning.ElementUsers:        len(p.Users) > 0,
		provisioning.ElementUnits:        len(p.Units) > 0,
		provisioning.ElementNTP:          p.NTP != nil,
		provisioning.ElementDisks:        p.Disks != nil,
		provisioning.ElementMounts:       len(p.Mounts) > 0,
		provisioning.ElementBootCommands: len(p.BootCommands) > 0,
		provisioning.ElementCommands:     len(p.Commands) > 0,
		provisioning.ElementSentinel:     p.Sentinel != "",
	}
	for _, f := range p.Files {
		used[provisioning.ElementFileOwner] = used[provisioning.ElementFileOwner] || f.Owner != ""
		used[provisioning.ElementFileAppend] = used[provisioning.ElementFileAppend] || f.Append != nil && *f.Append
		gz := f.Encoding == provisioning.EncodingGzip || f.Encoding == provisioning.EncodingGzipBase64
		used[provisioning.ElementFileGzip] = used[provisioning.ElementFileGzip] || gz
		used[provisioning.ElementFileSpecialBits] = used[provisioning.ElementFileSpecialBits] || f.SpecialBits()
	}
	for _, u := range p.Users {
		used[provisioning.ElementUserSudo] = used[provisioning.ElementUserSudo] || u.Sudo != ""
		used[provisioning.ElementUserSSHKeys] = used[provisioning.ElementUserSSHKeys] || len(u.SSHAuthorizedKeys) > 0
		used[provisioning.ElementUserPasswd] = used[provisioning.ElementUserPasswd] || u.Passwd != ""
	}
	for _, u := range p.Units {
		used[provisioning.ElementUnitDropIns] = used[provisioning.ElementUnitDropIns] || len(u.DropIns) > 0
	}
	var out []provisioning.Element
	for _, e := range provisioning.Elements {
		if used[e] {
			out = append(out, e)
		}
	}
	return out
}

// Chrony are the files a time client keeps its servers in, on the images
// the runners use (Debian's chrony, Fedora's, ntpd).
var Chrony = []string{"/etc/chrony/chrony.conf", "/etc/chrony.conf", "/etc/ntp.conf"}

// Expect is the State p promises, as the Plan's godoc states it, for a boot
// whose commands all succeed and that Instrument logged: each file with its
// decoded content (appends added to what the Plan wrote before), mode
// (0644 when empty) and owner ("user" alone is user:root, none root:root);
// each user with its groups, the rule `sudo -l -U` lists for its Sudo, its
// ssh keys and, when set, its password hash in /etc/shadow (locked with "!"
// unless LockPassword is false); each unit with its drop-ins, enabled ones
// started after the last pre command; the NTP servers in the time client's
// configuration; every command's Done line, pre, then bootstrap, then post;
// the Sentinel.
func Expect(p *provisioning.Plan) State {
	var w State
	files := map[string]int{}
	for _, f := range p.Files {
		content := decode(f)
		i, seen := files[f.Path]
		if !seen {
			i = len(w.Files)
			files[f.Path] = i
			w.Files = append(w.Files, File{Path: f.Path})
		}
		if f.Append != nil && *f.Append {
			content = w.Files[i].Content + content
		}
		w.Files[i].Content, w.Files[i].Mode, w.Files[i].Owner = content, mode(f.Permissions), owner(f.Owner)
	}
	for _, u := range p.Users {
		user := User{Name: u.Name, Sudo: sudoListed(u.Sudo), SSHKeys: u.SSHAuthorizedKeys}
		for _, g := range strings.Split(u.Groups, ",") {
			if g = strings.TrimSpace(g); g != "" {
				user.Groups = append(user.Groups, g)
			}
		}
		w.Users = append(w.Users, user)
		if u.Passwd != "" {
			hash := u.Passwd
			if u.LockPassword == nil || *u.LockPassword {
				hash = "!" + hash
			}
			w.Contains = append(w.Contains, Contains{Paths: []string{"/etc/shadow"}, Text: "\n" + u.Name + ":" + hash + ":"})
		}
	}
	var order []string
	lastPre := ""
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap, provisioning.PhasePost} {
		for i, c := range p.Commands {
			if c.Phase == phase {
				order = append(order, Done(p, i))
				if phase == provisioning.PhasePre {
					lastPre = Done(p, i)
				}
			}
		}
	}
	w.Log = order
	for _, u := range p.Units {
		unit := Unit{Name: u.Name, Contents: u.Contents, Enabled: u.Enabled != nil && *u.Enabled}
		if unit.Enabled {
			unit.StartedAfter = lastPre
		}
		if len(u.DropIns) > 0 {
			unit.DropIns = map[string]string{}
			for _, d := range u.DropIns {
				unit.DropIns[d.Name] = d.Contents
			}
		}
		w.Units = append(w.Units, unit)
	}
	if p.NTP != nil && (p.NTP.Enabled == nil || *p.NTP.Enabled) {
		for _, s := range p.NTP.Servers {
			w.Contains = append(w.Contains, Contains{Paths: Chrony, Text: s})
		}
	}
	if p.Sentinel != "" {
		w.Files = append(w.Files, File{Path: p.Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"})
	}
	return w
}

// decode is f's content as the node must hold it. Content that does not
// decode stays as it is: the Plan is then invalid and the render fails
// before any node is checked.
func decode(f provisioning.File) string {
	data := []byte(f.Content)
	if f.Encoding == provisioning.EncodingBase64 || f.Encoding == provisioning.EncodingGzipBase64 {
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(f.Content), ""))
		if err != nil {
			return f.Content
		}
		data = b
	}
	if f.Encoding == provisioning.EncodingGzip || f.Encoding == provisioning.EncodingGzipBase64 {
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return f.Content
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return f.Content
		}
		data = b
	}
	return string(data)
}

// mode turns a Plan's Permissions into the bits Verify compares.
func mode(perm string) os.FileMode {
	if perm == "" {
		return 0o644
	}
	n, err := strconv.ParseUint(perm, 8, 32)
	if err != nil {
		return 0
	}
	m := os.FileMode(n & 0o777)
	for bit, flag := range map[uint64]os.FileMode{0o4000: os.ModeSetuid, 0o2000: os.ModeSetgid, 0o1000: os.ModeSticky} {
		if n&bit != 0 {
			m |= flag
		}
	}
	return m
}

func owner(o string) string {
	switch {
	case o == "":
		return "root:root"
	case !strings.Contains(o, ":"):
		return o + ":root"
	}
	return o
}

var sudoTag = regexp.MustCompile(`([A-Z_]+):\s*`)

// sudoListed is how `sudo -l -U` lists a sudoers rule "HOSTS=(RUNAS) TAGS:
// COMMANDS": without its hosts, a blank after each tag's colon. A rule not
// of that shape is not checked ("").
func sudoListed(rule string) string {
	_, rest, ok := strings.Cut(strings.TrimSpace(rule), "=")
	if !ok || strings.Contains(rule, "\n") {
		return ""
	}
	rest = strings.Join(strings.Fields(rest), " ")
	runas := ""
	if strings.HasPrefix(rest, "(") {
		if end := strings.Index(rest, ")"); end > 0 {
			users, group, hasGroup := strings.Cut(rest[1:end], ":")
			runas = "(" + strings.TrimSpace(users)
			if hasGroup {
				runas += " : " + strings.TrimSpace(group)
			}
			runas += ") "
			rest = strings.TrimSpace(rest[end+1:])
		}
	}
	return runas + sudoTag.ReplaceAllString(rest, "$1: ")
}
