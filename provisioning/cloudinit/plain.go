package cloudinit

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// VersionPlain selects the plain cloud-config dialect through
// provisioning.Options.Version: for Plans that do not come from a
// KubeadmConfig, such as those of k3s, RKE2 or MicroK8s providers. It is
// what the zero Options render too ("" and "plain" are the same dialect).
//
// CABPK's dialect (Version VersionCABPK) starts every document with a jinja header,
// adds CABPK's /run/cluster-api placeholder file and lays out YAML by hand
// to keep CABPK's bytes, so "{{ }}" in a manifest is a jinja hazard and a
// sudo rule such as "ALL=(ALL) NOPASSWD: ALL" is YAML syntax. The plain
// dialect is a typed document (plainDoc) in yaml.v3's bytes (written by
// emitPlain where it can, else by yaml.v3 itself): "#cloud-config" and
// nothing of CABPK's, every value data. Hazards of
// CABPK's layout do not exist here, and what Validate calls a hazard is an
// error: this is nodeboot's own mode.
//
// runcmd runs with set -e: unit steps, pre commands, the bootstrap
// command, the sentinel, post commands; the first failure stops the rest.
//
// A Plan with per-node values becomes a jinja template of cloud-init's
// (plain_nodevalues.go), one with UserData multi-part MIME
// (plain_mime.go); a Plan with neither renders exactly as before.
const VersionPlain = "plain"

const plainName = Format + " (plain)"

// plainHeader is the one line cloud-init needs to read the document as
// cloud-config.
const plainHeader = "#cloud-config\n"

// checkPlain validates the Plan for the plain dialect and returns it with
// its units desugared, ready for plainDocument.
func checkPlain(p *provisioning.Plan, opts provisioning.Options) (provisioning.Problems, *provisioning.Plan) {
	p = withUnits(p)
	ps := p.Validate()
	if p == nil {
		return ps, nil
	}
	if len(opts.AdditionalConfig) > 0 {
		provisioning.Unsupported(&ps, plainName, opts.AdditionalConfigPath(), "additional config")
	}
	for i := range p.Users {
		u := &p.Users[i]
		if strings.ContainsAny(u.Sudo, "\n\r") {
			ps.Errorf(p.UserPath(i).Member("sudo"), "must be one sudoers rule on one line")
		}
	}
	for i, m := range p.Mounts {
		for j, v := range m {
			if strings.ContainsAny(v, "\n\r\t ") {
				ps.Errorf(p.SectionPath(provisioning.SectionMounts).Index(i).Index(j), "must not contain blanks or line breaks (fstab separates fields with them)")
			}
		}
	}
	plainDiskGaps(&ps, p)
	checkPlainUserData(&ps, p)
	provisioning.RefuseLiteralJinja(&ps, p, plainName)
	return ps.Strict(opts), p
}

// plainDiskGaps warns where cloud-init 22.4's schema rejects what its disk
// module uses: a partition type without a decimal code (such as LVM's 8e,
// which sfdisk reads as hex) and a partition number for a filesystem (the
// schema lists only auto, any and none). cloud-init renders both; the
// schema validation it logs fails.
func plainDiskGaps(ps *provisioning.Problems, p *provisioning.Plan) {
	if p.Disks == nil {
		return
	}
	for i, part := range p.Disks.Partitions {
		for j, s := range part.DiskLayout {
			if s.PartitionType == "" {
				continue
			}
			if _, ok := plainNumber(partitionTypeCode(s.PartitionType)).(int); !ok {
				ps.Warnf(p.SectionPath(provisioning.SectionPartitions).Index(i).Field("diskLayout").Index(j).Field("partitionType"),
					"has no decimal partition type code, which cloud-init's schema requires (cloud-init still passes the code to sfdisk)")
			}
		}
	}
	for i, fs := range p.Disks.Filesystems {
		if _, ok := plainNumber(fs.Partition).(int); ok {
			ps.Warnf(p.SectionPath(provisioning.SectionFilesystems).Index(i).Field("partition"),
				"is a partition number, which cloud-init 22.4's schema rejects (it lists auto, any and none; cloud-init still uses the number)")
		}
	}
}

// renderPlain is Render for VersionPlain.
func renderPlain(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	ps, p := checkPlain(p, opts)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	data, sizes, err := plainBytes(p)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal %s: %w", provisioning.ErrInvalid, plainName, err)
	}
	out := &provisioning.Output{Data: data, Format: Format, Sizes: sizes}
	if len(ps) > 0 {
		out.Warnings = ps
	}
	if opts.Compress {
		out.Compressed = true
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = w.Write(out.Data)
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("%w: gzip %s: %w", provisioning.ErrInvalid, plainName, err)
		}
		out.Sizes[provisioning.SizeUncompressed] = len(out.Data)
		out.Data = z.Bytes()
		out.Sizes[provisioning.SizeTotal] = len(out.Data)
	}
	if opts.MaxBytes > 0 && len(out.Data) > opts.MaxBytes {
		return nil, provisioning.TooLarge("%s output is %d bytes, budget %d", plainName, len(out.Data), opts.MaxBytes)
	}
	return out, nil
}

// plainBytes is the user data of a checked Plan: the document, as a jinja
// template when the Plan has per-node values, wrapped in multi-part MIME
// with the Plan's UserData when it has some.
func plainBytes(p *provisioning.Plan) ([]byte, map[string]int, error) {
	var jv *jinjaValues
	if p.UsesNodeValues() {
		jv = newJinjaValues(p)
		p = jv.templatedFiles(p)
	}
	p = p.WithCommandTemplates()
	d := plainDocument(p)
	var data []byte
	var sizes map[string]int
	var err error
	if jv == nil {
		data, sizes, err = marshalPlain(d)
	} else {
		if len(d.RunCmd) == 0 {
			d.RunCmd = []string{"set -e"}
		}
		// After "set -e", before any command.
		d.RunCmd = append(d.RunCmd[:1], append(jv.runCmdPrologue(), d.RunCmd[1:]...)...)
		data, err = jv.marshal(d)
		sizes = map[string]int{provisioning.SizeTotal: len(data)}
	}
	if err != nil || len(p.UserData) == 0 {
		return data, sizes, err
	}
	doc := len(data)
	data = mimeUserData(data, jv != nil, p.UserData)
	sizes[provisioning.SizeTotal] = len(data)
	sizes[provisioning.SizeUserData] = len(data) - doc
	return data, sizes, nil
}

// marshalPlain writes the header and the document, and sizes its
// write_files and runcmd/bootcmd parts (the keys CABPK's dialect reports
// too). Every top-level key starts a line of its own at column 0 and
// everything under it is indented, so a part's size is read off the
// document itself: marshalling each part again took a third of the render.
func marshalPlain(d *plainDoc) ([]byte, map[string]int, error) {
	data, ok := emitPlain(append(make([]byte, 0, plainEstimate(d)), plainHeader...), d)
	if !ok {
		var err error
		if data, err = encodePlain(d); err != nil {
			return nil, nil, err
		}
	}
	sizes := map[string]int{provisioning.SizeTotal: len(data), provisioning.SizeWriteFiles: 0, provisioning.SizeCommands: 0}
	key, start := "", 0
	account := func(end int) {
		switch key {
		case "write_files":
			sizes[provisioning.SizeWriteFiles] += end - start
		case "runcmd", "bootcmd":
			sizes[provisioning.SizeCommands] += end - start
		}
	}
	for i := len(plainHeader); i < len(data); {
		eol := bytes.IndexByte(data[i:], '\n')
		if eol < 0 {
			eol = len(data) - i
		} else {
			eol++
		}
		if c := data[i]; c != ' ' && c != '\n' {
			account(i)
			key, start = "", i
			if colon := bytes.IndexByte(data[i:i+eol], ':'); colon > 0 {
				key = string(data[i : i+colon])
			}
		}
		i += eol
	}
	account(len(data))
	return data, sizes, nil
}

// encodePlain is the header and d as yaml.v3 writes it (with the strings
// PyYAML would misread double-quoted: plain_pyyaml.go).
func encodePlain(d *plainDoc) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(plainEstimate(d))
	b.WriteString(plainHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// plainEstimate is about what the document takes, so the buffer grows at
// most once or twice.
func plainEstimate(d *plainDoc) int {
	n := 256
	for _, f := range d.WriteFiles {
		n += 96 + len(f.Path) + len(f.Content)*5/4
	}
	return n
}
