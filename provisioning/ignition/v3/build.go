package ignitionv3

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/nodeboot/nodeboot/provisioning"
)

// The native dialect builds the newest spec's types (v3_5) once; older
// versions are reached through Ignition's own parser (see render.go),
// because everything a Plan needs exists since 3.3.

// Paths and units the native dialect adds to a node.
const (
	scriptDir       = "/etc/nodeboot/"
	bootstrapScript = scriptDir + "bootstrap.sh"
	bootcmdScript   = scriptDir + "bootcmd.sh"
	bootstrapUnit   = "nodeboot-bootstrap.service"
	bootcmdUnit     = "nodeboot-bootcmd.service"
	// doneStamp lives on the persistent root: the sentinel is under /run and
	// vanishes at reboot, the stamp keeps the bootstrap from running twice.
	doneStamp     = "/var/lib/nodeboot/bootstrap.done"
	sudoersDir    = "/etc/sudoers.d/"
	timesyncdConf = "/etc/systemd/timesyncd.conf.d/10-nodeboot.conf"
	chronyConf    = "/etc/chrony.conf"
	// chronyDefaults are Fedora's chrony.conf settings other than the sources.
	chronyDefaults = "driftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\n"
	inactiveExpiry = "1" // days since the epoch: an account that expired in 1970.
)

// v3Builder turns a Plan into Ignition v3 types, recording every feature
// Ignition cannot express as an error.
type v3Builder struct {
	plan *provisioning.Plan
	// values are the per-node values the Plan's templates use; the
	// commands' templates are already expanded in plan.
	values []provisioning.NodeValue
	ps     provisioning.Problems
	cfg    types.Config
	// files maps a Plan file's path to its entry in cfg.Storage.Files:
	// Ignition refuses two entries for one path, so a later append to the
	// same path joins the earlier entry.
	files map[string]int
}

func (b *v3Builder) build() {
	p := b.plan
	for i := range p.Files {
		b.file(i, &p.Files[i])
	}
	for i := range p.Users {
		b.user(i, &p.Users[i])
	}
	b.ntp()
	b.disks()
	b.mounts()
	b.bootCommands()
	b.commands()
	b.units()
}

func (b *v3Builder) file(i int, f *provisioning.File) {
	if len(f.Template) > 0 {
		return // the first-boot script writes it (nodeValuesScript)
	}
	pp := func(field string) provisioning.Path {
		return provisioning.FieldPath(f.Origin, b.plan.FilePath(i), field)
	}
	res, err := resource(f.Content, f.Encoding)
	if err != nil {
		b.ps.Errorf(pp("content"), "%v", err)
		return
	}
	out := types.File{Node: types.Node{Path: f.Path}}
	b.owner(&out.Node, f.Owner)
	if f.Permissions != "" {
		mode, _ := strconv.ParseInt(f.Permissions, 8, 32)
		out.Mode = ptrTo(int(mode))
	}
	appendTo := f.Append != nil && *f.Append
	if j, ok := b.files[f.Path]; ok && appendTo {
		b.join(&b.cfg.Storage.Files[j], out, res)
		return
	}
	if appendTo {
		// Appending keeps what the image has and creates the file otherwise.
		out.Append = []types.Resource{res}
	} else {
		out.Overwrite = ptrTo(true)
		out.Contents = res
	}
	if b.files == nil {
		b.files = make(map[string]int)
	}
	b.files[f.Path] = len(b.cfg.Storage.Files)
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, out)
}

// join folds a later append to a path into the earlier entry for it, as
// writing the two in order would leave the file (Ignition writes Contents,
// then each Append); the later file's mode and owner, where it sets them,
// win. A later replacement of a path never gets here: Validate's
// duplicate-path hazard is an error in the native dialects.
func (b *v3Builder) join(into *types.File, later types.File, res types.Resource) {
	into.Append = append(into.Append, res)
	if later.Mode != nil {
		into.Mode = later.Mode
	}
	if later.User.ID != nil || later.User.Name != nil {
		into.User = later.User
	}
	if later.Group.ID != nil || later.Group.Name != nil {
		into.Group = later.Group
	}
}

// resource turns content in a Plan encoding into an Ignition data: URL,
// leaving gzip compressed for Ignition to inflate.
// withoutBlanks is base64 text without the blanks and line breaks
// Validate accepts in it (the standard decoder skips only line breaks).
func withoutBlanks(s string) string {
	if !strings.ContainsAny(s, " \t") {
		return s
	}
	return strings.NewReplacer(" ", "", "\t", "").Replace(s)
}

func resource(content string, enc provisioning.Encoding) (types.Resource, error) {
	switch enc {
	case provisioning.EncodingNone:
		return types.Resource{Source: ptrTo(textURL(content))}, nil
	case provisioning.EncodingBase64:
		raw, err := base64.StdEncoding.DecodeString(withoutBlanks(content))
		if err != nil {
			return types.Resource{}, fmt.Errorf("is not valid base64: %w", err)
		}
		return types.Resource{Source: ptrTo("data:;base64," + base64.StdEncoding.EncodeToString(raw))}, nil
	case provisioning.EncodingGzip, provisioning.EncodingGzipBase64:
		raw := []byte(content)
		if enc == provisioning.EncodingGzipBase64 {
			var err error
			if raw, err = base64.StdEncoding.DecodeString(withoutBlanks(content)); err != nil {
				return types.Resource{}, fmt.Errorf("is not valid base64: %w", err)
			}
		}
		if !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
			return types.Resource{}, fmt.Errorf("is not gzip data (encoding %q)", enc)
		}
		return types.Resource{
			Source:      ptrTo("data:;base64," + base64.StdEncoding.EncodeToString(raw)),
			Compression: ptrTo("gzip"),
		}, nil
	}
	return types.Resource{}, fmt.Errorf("unknown encoding %q", enc)
}

// textURL is content as a plain data: URL that escapes only what a URL
// cannot hold or Ignition's data URL parser refuses: control characters,
// space, non-ASCII bytes and <>"#%?[\]^`{|}. Everything else, the base64
// alphabet of PEM blocks and YAML's punctuation included, stays as it is, so
// inside the gzip wrapper gzip compresses text rather than escape sequences.
func textURL(content string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(content); i++ {
		if mustEscape(content[i]) {
			n++
		}
	}
	b := make([]byte, 0, len("data:,")+len(content)+2*n)
	b = append(b, "data:,"...)
	for i := 0; i < len(content); i++ {
		c := content[i]
		if mustEscape(c) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// mustEscape: RFC 2396's delims and unwise characters, '%' (which starts an
// escape), '?' (a URL query) and everything outside printable ASCII.
func mustEscape(c byte) bool { return urlEscaped[c] }

var urlEscaped = func() (t [256]bool) {
	for c := range t {
		t[c] = c <= ' ' || c >= 0x7f
	}
	for _, c := range []byte("<>\"#%?[\\]^`{|}") {
		t[c] = true
	}
	return t
}()

// owner sets "user[:group]"; all-digit parts are ids, others names.
func (b *v3Builder) owner(n *types.Node, owner string) {
	if owner == "" {
		return
	}
	user, group, _ := strings.Cut(owner, ":")
	if user != "" {
		if id, err := strconv.Atoi(user); err == nil {
			n.User.ID = &id
		} else {
			n.User.Name = ptrTo(user)
		}
	}
	if group != "" {
		if id, err := strconv.Atoi(group); err == nil {
			n.Group.ID = &id
		} else {
			n.Group.Name = ptrTo(group)
		}
	}
}

func (b *v3Builder) user(i int, u *provisioning.User) {
	out := types.PasswdUser{Name: u.Name}
	opt := func(v string) *string {
		if v == "" {
			return nil
		}
		return ptrTo(v)
	}
	out.Gecos, out.HomeDir, out.Shell, out.PrimaryGroup = opt(u.Gecos), opt(u.HomeDir), opt(u.Shell), opt(u.PrimaryGroup)
	for _, g := range strings.Split(u.Groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out.Groups = append(out.Groups, types.Group(g))
		}
	}
	if u.Passwd != "" {
		hash := u.Passwd
		// cloud-init's lock_passwd defaults to true: the hash is kept but
		// made unusable, which is what a leading "!" does in /etc/shadow.
		if u.LockPassword == nil || *u.LockPassword {
			hash = "!" + hash
		}
		out.PasswordHash = &hash
	}
	for _, k := range u.SSHAuthorizedKeys {
		out.SSHAuthorizedKeys = append(out.SSHAuthorizedKeys, types.SSHAuthorizedKey(k))
	}
	b.cfg.Passwd.Users = append(b.cfg.Passwd.Users, out)
	// cloud-init creates the groups a user names that the image lacks;
	// Ignition creates listed groups (and leaves existing ones as they are)
	// before any user, so useradd finds them.
	if u.PrimaryGroup != "" {
		b.group(u.PrimaryGroup)
	}
	for _, g := range out.Groups {
		b.group(string(g))
	}
	if u.Sudo != "" {
		pp := b.plan.UserPath(i).Member("sudo")
		if strings.ContainsAny(u.Sudo, "\n\r") {
			b.ps.Errorf(pp, "must be one sudoers rule on one line")
		}
		// sudo reads /etc/sudoers.d files that are not writable by others;
		// 0440 is what visudo writes.
		b.cfg.Storage.Files = append(b.cfg.Storage.Files, generated(sudoersDir+sudoersName(u.Name), 0o440, u.Name+" "+u.Sudo+"\n"))
	}
}

// sudoersName is the /etc/sudoers.d file name of user's rule: one sudo
// reads. sudo's @includedir skips names that contain a '.' or end in '~'
// (sudoers(5)), so the user name is used only when it is made of letters,
// digits, '_' and '-'; any other name has those bytes replaced by '_' and
// a hash of the whole name appended, so two users never share a file
// ("jane.doe" and "jane_doe" stay apart). The name is bounded too: a user
// name may be longer than a file name can be.
func sudoersName(user string) string {
	const maxPlain = 64
	plain := len(user) <= maxPlain
	name := []byte(user)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
			plain = false
		}
	}
	if plain {
		return user
	}
	if len(name) > maxPlain {
		name = name[:maxPlain]
	}
	sum := sha256.Sum256([]byte(user))
	return string(name) + "-" + hex.EncodeToString(sum[:4])
}

func (b *v3Builder) group(name string) {
	for _, g := range b.cfg.Passwd.Groups {
		if g.Name == name {
			return
		}
	}
	b.cfg.Passwd.Groups = append(b.cfg.Passwd.Groups, types.PasswdGroup{Name: name})
}

// generated is a file the dialect adds, replacing whatever the image has.
func generated(path string, mode int, content string) types.File {
	return types.File{
		Node:          types.Node{Path: path, Overwrite: ptrTo(true)},
		FileEmbedded1: types.FileEmbedded1{Mode: &mode, Contents: types.Resource{Source: ptrTo(textURL(content))}},
	}
}

// ntp configures the time client of both image families Ignition v3 boots:
// systemd-timesyncd (Flatcar's default) through a drop-in, and chronyd
// (Fedora CoreOS's) through /etc/chrony.conf, which FCOS documents replacing
// whole. Each distribution keeps its own client enabled; the other file is
// inert there. enabled: false configures nothing, as cloud-init's ntp
// module skips itself: the Plan's meaning of NTP.Enabled.
func (b *v3Builder) ntp() {
	n := b.plan.NTP
	if n == nil || n.Enabled != nil && !*n.Enabled || len(n.Servers) == 0 {
		return
	}
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, generated(timesyncdConf, 0o644, "[Time]\nNTP="+strings.Join(n.Servers, " ")+"\n"))
	var chrony strings.Builder
	for _, s := range n.Servers {
		chrony.WriteString("server " + s + " iburst\n")
	}
	chrony.WriteString(chronyDefaults)
	b.cfg.Storage.Files = append(b.cfg.Storage.Files, generated(chronyConf, 0o644, chrony.String()))
}

func ptrTo[T any](v T) *T { return &v }
