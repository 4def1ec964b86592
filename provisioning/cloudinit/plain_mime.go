package cloudinit

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// A Plan with UserData renders as cloud-init's own multi-part MIME user
// data (what `cloud-init devel make-mime` writes): the Plan's cloud-config
// first, then each document as a part of its type. cloud-init merges
// text/cloud-config parts in order and runs text/x-shellscript parts in
// its final stage (scripts_user).

// userDataMerge is the Merge-Type of a user's cloud-config part: its lists
// are appended to the Plan's and its other keys added where the Plan has
// none, so a user's runcmd or write_files cannot silently replace the
// Plan's bootstrap (cloud-init's default replaces every list). A merge_how
// in the document itself comes first in cloud-init's merger list.
const userDataMerge = "dict(recurse_array,recurse_dict)+list(append)+str()"

// userScriptName names a user's shell script in cloud-init's scripts
// directory: scripts_user runs the scripts sorted by name, and "runcmd"
// (the Plan's commands) sorts before "userdata-", so user scripts run
// after the Plan's commands.
func userScriptName(i int) string { return fmt.Sprintf("userdata-%02d", i) }

// checkPlainUserData refuses what cloud-init cannot apply: an Ignition
// config, and a cloud-config part that is not a YAML mapping.
func checkPlainUserData(ps *provisioning.Problems, p *provisioning.Plan) {
	provisioning.RefuseUserData(ps, p, plainName, provisioning.UserDataCloudConfig, provisioning.UserDataShellScript)
	for i := range p.UserData {
		u := &p.UserData[i]
		if u.Type != provisioning.UserDataCloudConfig || len(u.Content) > provisioning.MaxUserDataBytes {
			continue
		}
		if msg := cloudConfigProblem(u.Content); msg != "" {
			ps.Errorf(provisioning.FieldPath(u.Origin, provisioning.NewPath("userData").Index(i), "content"),
				"must be a cloud-config document: a YAML mapping of cloud-init's keys (%s)", msg)
		}
	}
}

// cloudConfigProblem says why cloud-init's reader (PyYAML's safe_load)
// would not give a mapping for content, or "". cloud-init drops such a part
// with a log line only. yaml.v3 alone reads the first document of a stream
// and builds no value, where safe_load refuses a stream and what it cannot
// build (plain_construct.go); a key given twice, which safe_load takes (the
// last wins), is no problem.
func cloudConfigProblem(content string) string {
	dec := yaml.NewDecoder(strings.NewReader(content))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return "not YAML"
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return "not a mapping"
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return "more than one YAML document"
	}
	return constructProblem(doc.Content[0])
}

// mimeUserData wraps the Plan's document and the user's documents. It is
// written by hand rather than with mime/multipart, whose CRLF line ends
// would have to be rewritten, and a user's CRLF with them.
func mimeUserData(plan []byte, jinja bool, docs []provisioning.UserData) []byte {
	// The boundary must not occur in any part: a hash of all of them
	// cannot, and keeps the output the same for the same Plan.
	h := sha256.New()
	h.Write(plan)
	for i := range docs {
		h.Write([]byte(docs[i].Content))
	}
	boundary := "==nodeboot-" + hex.EncodeToString(h.Sum(nil))[:32] + "=="
	var b bytes.Buffer
	b.Grow(len(plan) + 512*(len(docs)+1))
	b.WriteString("Content-Type: multipart/mixed; boundary=\"" + boundary + "\"\nMIME-Version: 1.0\n")
	typ := "text/cloud-config"
	if jinja {
		// cloud-init renders a text/jinja2 part, then handles it by its
		// rendered header (#cloud-config).
		typ = "text/jinja2"
	}
	mimePart(&b, boundary, typ, "nodeboot.cfg", "", plan)
	for i := range docs {
		switch d := &docs[i]; d.Type {
		case provisioning.UserDataCloudConfig:
			mimePart(&b, boundary, "text/cloud-config", fmt.Sprintf("userdata-%02d.cfg", i), userDataMerge, []byte(d.Content))
		case provisioning.UserDataShellScript:
			mimePart(&b, boundary, "text/x-shellscript", userScriptName(i), "", []byte(d.Content))
		}
	}
	b.WriteString("\n--" + boundary + "--\n")
	return b.Bytes()
}

// mimePart writes one part: 7bit when content is ASCII, else base64, which
// cloud-init decodes (an 8bit part would reach it re-encoded by Python's
// email parser). The line break before the next boundary belongs to the
// boundary (RFC 2046), so content keeps its own last line break.
func mimePart(b *bytes.Buffer, boundary, typ, filename, merge string, content []byte) {
	b.WriteString("\n--" + boundary + "\nContent-Type: " + typ + "; charset=\"utf-8\"\nMIME-Version: 1.0\n")
	b.WriteString("Content-Disposition: attachment; filename=\"" + filename + "\"\n")
	if merge != "" {
		b.WriteString("Merge-Type: " + merge + "\n")
	}
	ascii := true
	for _, c := range content {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		b.WriteString("Content-Transfer-Encoding: 7bit\n\n")
		b.Write(content)
		return
	}
	b.WriteString("Content-Transfer-Encoding: base64\n\n")
	enc := base64.StdEncoding.EncodeToString(content)
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b.WriteString(enc)
}
