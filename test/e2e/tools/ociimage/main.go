// Command ociimage packs directories into an OCI image archive that
// `ctr images import` reads, without a container engine or a registry: the
// e2e nodes' images (pause, the control plane, kube-proxy, CoreDNS, Flannel,
// the workload) are built from binaries compiled from the Go module proxy
// and files from Debian packages.
//
//	ociimage -o out.tar -name e2e.invalid/pause:3.10.2 -layer DIR [-layer DIR]
//	         [-entrypoint '["/pause"]'] [-cmd '[...]'] [-env K=V] [-label K=V]
//
// Each -layer directory becomes one uncompressed layer (containerd unpacks
// it without a gzip pass; the archive is read once per node). Owners are
// root, modes and symlinks are kept, times are the epoch, so the same inputs
// give the same digests and two images built on one base share its layer.
// Every -name is listed in index.json with containerd's image-name
// annotation, so one import creates every name.
package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type blob struct {
	digest string
	size   int64
	path   string // on disk, or "" with data
	data   []byte
}

func main() {
	var names, layers, env, labels multi
	out := flag.String("o", "", "archive to write")
	entrypoint := flag.String("entrypoint", "", "JSON list")
	cmd := flag.String("cmd", "", "JSON list")
	workdir := flag.String("workdir", "/", "working directory")
	arch := flag.String("arch", "amd64", "architecture")
	flag.Var(&names, "name", "image name (repeatable)")
	flag.Var(&layers, "layer", "directory packed as one layer (repeatable, lowest first)")
	flag.Var(&env, "env", "K=V (repeatable)")
	flag.Var(&labels, "label", "K=V (repeatable)")
	flag.Parse()
	if *out == "" || len(names) == 0 || len(layers) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ociimage -o OUT -name NAME [-name NAME] -layer DIR [-layer DIR] [-entrypoint JSON] [-cmd JSON] [-env K=V] [-label K=V]")
		os.Exit(2)
	}
	if err := build(*out, names, layers, *entrypoint, *cmd, *workdir, *arch, env, labels); err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
}

func build(out string, names, layers []string, entrypoint, cmd, workdir, arch string, env, labels []string) error {
	work, err := os.MkdirTemp(filepath.Dir(out), ".ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var layerBlobs []blob
	var diffIDs []string
	for i, dir := range layers {
		b, err := packLayer(dir, filepath.Join(work, fmt.Sprintf("layer%d.tar", i)))
		if err != nil {
			return fmt.Errorf("layer %s: %w", dir, err)
		}
		layerBlobs = append(layerBlobs, b)
		diffIDs = append(diffIDs, b.digest)
	}

	cfg := map[string]any{
		"architecture": arch,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"rootfs":       map[string]any{"type": "layers", "diff_ids": diffIDs},
		"config":       imageConfig(entrypoint, cmd, workdir, env, labels),
	}
	if err := checkJSONList("entrypoint", entrypoint); err != nil {
		return err
	}
	if err := checkJSONList("cmd", cmd); err != nil {
		return err
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	cfgBlob := memBlob(cfgJSON)

	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: cfgBlob.digest, Size: cfgBlob.size},
	}
	var ls []descriptor
	for _, b := range layerBlobs {
		ls = append(ls, descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: b.digest, Size: b.size})
	}
	manifest["layers"] = ls
	manJSON, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	manBlob := memBlob(manJSON)

	var idx []descriptor
	for _, n := range names {
		if strings.LastIndex(n, ":") <= strings.LastIndex(n, "/") {
			return fmt.Errorf("-name %q: want repository:tag", n)
		}
		idx = append(idx, descriptor{
			MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: manBlob.digest, Size: manBlob.size,
			Platform: &platform{Architecture: arch, OS: "linux"},
			Annotations: map[string]string{
				"io.containerd.image.name":          n,
				"org.opencontainers.image.ref.name": n[strings.LastIndex(n, ":")+1:],
			},
		})
	}
	idxJSON, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": idx})
	if err != nil {
		return err
	}

	tmp := filepath.Join(work, "archive.tar")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	blobs := append([]blob{cfgBlob, manBlob}, layerBlobs...)
	if err := writeArchive(tw, blobs, idxJSON); err != nil {
		f.Close()
		return err
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func checkJSONList(flagName, v string) error {
	if v == "" {
		return nil
	}
	var l []string
	if err := json.Unmarshal([]byte(v), &l); err != nil {
		return fmt.Errorf("-%s: want a JSON list of strings: %w", flagName, err)
	}
	return nil
}

func imageConfig(entrypoint, cmd, workdir string, env, labels []string) map[string]any {
	c := map[string]any{"WorkingDir": workdir}
	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	c["Env"] = env
	if entrypoint != "" {
		c["Entrypoint"] = json.RawMessage(entrypoint)
	}
	if cmd != "" {
		c["Cmd"] = json.RawMessage(cmd)
	}
	if len(labels) > 0 {
		m := map[string]string{}
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			m[k] = v
		}
		c["Labels"] = m
	}
	return c
}

func memBlob(b []byte) blob {
	sum := sha256.Sum256(b)
	return blob{digest: "sha256:" + hex.EncodeToString(sum[:]), size: int64(len(b)), data: b}
}

// packLayer writes dir as an uncompressed tar with fixed owners and times.
func packLayer(dir, out string) (blob, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return blob{}, err
	}
	sort.Strings(paths)
	f, err := os.Create(out)
	if err != nil {
		return blob{}, err
	}
	defer f.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	tw := tar.NewWriter(cw)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return blob{}, err
		}
		rel, _ := filepath.Rel(dir, p)
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return blob{}, err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return blob{}, err
		}
		hdr.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return blob{}, err
		}
		if fi.Mode().IsRegular() {
			src, err := os.Open(p)
			if err != nil {
				return blob{}, err
			}
			_, err = io.Copy(tw, src)
			src.Close()
			if err != nil {
				return blob{}, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return blob{}, err
	}
	return blob{digest: "sha256:" + hex.EncodeToString(h.Sum(nil)), size: cw.n, path: out}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func writeArchive(tw *tar.Writer, blobs []blob, index []byte) error {
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0), Format: tar.FormatPAX})
	}
	file := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	layout := []byte(`{"imageLayoutVersion":"1.0.0"}`)
	if err := file("oci-layout", int64(len(layout)), strings.NewReader(string(layout))); err != nil {
		return err
	}
	if err := dir("blobs/"); err != nil {
		return err
	}
	if err := dir("blobs/sha256/"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, b := range blobs {
		if seen[b.digest] {
			continue
		}
		seen[b.digest] = true
		name := "blobs/sha256/" + strings.TrimPrefix(b.digest, "sha256:")
		if b.path == "" {
			if err := file(name, b.size, strings.NewReader(string(b.data))); err != nil {
				return err
			}
			continue
		}
		src, err := os.Open(b.path)
		if err != nil {
			return err
		}
		err = file(name, b.size, src)
		src.Close()
		if err != nil {
			return err
		}
	}
	return file("index.json", int64(len(index)), strings.NewReader(string(index)))
}
