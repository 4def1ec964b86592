package differential

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// cloudKeys maps a probed spec field to where cloud-config keeps it, as
// CABPK's layout writes it: a path of keys and indexes into what cloud-init
// reads ("-1" is the last item, "*" the only key of a mapping).
var cloudKeys = map[string]string{
	"files[0].path": "write_files.0.path", "files[0].owner": "write_files.0.owner",
	"files[0].permissions": "write_files.0.permissions", "files[0].content": "write_files.0.content",
	"users[0].name": "users.0.name", "users[0].gecos": "users.0.gecos", "users[0].groups": "users.0.groups",
	"users[0].homeDir": "users.0.homedir", "users[0].shell": "users.0.shell", "users[0].passwd": "users.0.passwd",
	"users[0].primaryGroup": "users.0.primary_group", "users[0].sudo": "users.0.sudo",
	"users[0].sshAuthorizedKeys[0]": "users.0.ssh_authorized_keys.0", "ntp.servers[0]": "ntp.servers.0",
	"diskSetup.partitions[0].device": "disk_setup.*", "diskSetup.filesystems[0].label": "fs_setup.0.label",
	"diskSetup.filesystems[0].filesystem": "fs_setup.0.filesystem", "diskSetup.filesystems[0].device": "fs_setup.0.device",
	"diskSetup.filesystems[0].partition": "fs_setup.0.partition", "diskSetup.filesystems[0].replaceFS": "fs_setup.0.replace_fs",
	"diskSetup.filesystems[0].extraOpts[0]": "fs_setup.0.extra_opts.0", "mounts[0][0]": "mounts.0.0",
	"mounts[0][1]": "mounts.0.1", "mounts[0][2]": "mounts.0.2", "bootCommands[0]": "bootcmd.0",
	"preKubeadmCommands[0]": "runcmd.0", "postKubeadmCommands[0]": "runcmd.-1",
}

// cloudRead returns what cloud-init read for a probed field: a string when
// it read a string (file content decoded as write_files decodes it), else
// the value's JSON form, so a number or null never equals the string.
func cloudRead(data any, field string) (string, error) {
	path, ok := cloudKeys[field]
	if !ok {
		return "", fmt.Errorf("no cloud-config key for %s", field)
	}
	v := data
	var file map[string]any
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			if k == "*" {
				if len(c) != 1 {
					return "", fmt.Errorf("%s: %d keys, want one", path, len(c))
				}
				for key := range c {
					return key, nil
				}
			}
			if k == "content" {
				file = c
			}
			var found bool
			if v, found = c[k]; !found {
				return "", fmt.Errorf("%s: no %q", path, k)
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || len(c) == 0 {
				return "", fmt.Errorf("%s: not a list item", path)
			}
			if i < 0 {
				i += len(c)
			}
			if i >= len(c) {
				return "", fmt.Errorf("%s: %d items", path, len(c))
			}
			v = c[i]
		default:
			return "", fmt.Errorf("%s: %T where a collection should be", path, v)
		}
	}
	s, isString := v.(string)
	if !isString {
		return fmt.Sprintf("<%T %v>", v, v), nil
	}
	if file != nil {
		return decodeContent(s, file["encoding"])
	}
	return s, nil
}

// decodeContent decodes write_files content as cloud-init does.
func decodeContent(s string, encoding any) (string, error) {
	e, _ := encoding.(string)
	switch e {
	case "", "text/plain":
		return s, nil
	case "b64", "base64":
		b, err := base64.StdEncoding.DecodeString(s)
		return string(b), err
	case "gz+b64", "gzip+base64", "gz+base64", "gzip+b64":
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", err
		}
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return "", err
		}
		out, err := io.ReadAll(z)
		return string(out), err
	}
	return "", fmt.Errorf("encoding %q", e)
}

// instanceData are the values that are meant for cloud-init's jinja step:
// their reading differs from what was written by design.
var instanceData = regexp.MustCompile(`\{\{\s*(ds|v1|v2|merged_cfg|sys_info)\.`)

// probeDoc is one rendering of a probe for cloud-init to judge.
type probeDoc struct {
	field, value string
	data         []byte
	warned       bool // nodeboot warned at the probed field
	corrected    bool
}

// judgeProbes lets cloud-init read every probe document and holds nodeboot
// to it: where cloud-init fails on CABPK's bytes or reads another value than
// the one declared, nodeboot warned at that field; where corrections left no
// warning, cloud-init accepts the document and reads exactly the declared
// value.
func judgeProbes(t testing.TB, docs []probeDoc) (missed, wrong int) {
	t.Helper()
	raw := make([][]byte, len(docs))
	for i, d := range docs {
		raw[i] = d.data
	}
	results := testenv.CloudInitLoad(t, raw)
	for i, d := range docs {
		r := results[i]
		got, err := "", error(nil)
		if r.Data != nil {
			got, err = cloudRead(r.Data, d.field)
		}
		exact := r.Valid && err == nil && got == d.value
		if d.corrected {
			if !exact && !d.warned && !instanceData.MatchString(d.value) {
				wrong++
				t.Errorf("corrected spec.%s = %q: cloud-init %s, reads %q (%v)", d.field, d.value, verdict(r), got, err)
			}
			continue
		}
		same := r.Valid && err == nil && (got == d.value || d.field == "files[0].content" && strings.TrimRight(got, "\n") == strings.TrimRight(d.value, "\n"))
		if !same && !d.warned && !instanceData.MatchString(d.value) {
			missed++
			t.Errorf("spec.%s = %q: cloud-init %s on CABPK's bytes, reads %q (%v), and nodeboot did not warn", d.field, d.value, verdict(r), got, err)
		}
	}
	return missed, wrong
}

func verdict(r testenv.CloudInitResult) string {
	if r.Valid {
		return "accepts it"
	}
	return "fails (" + firstLine(r.Error) + ")"
}
