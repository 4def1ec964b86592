// Command image builds nodeboot's manager image without a container engine:
// a static manager binary (CGO_ENABLED=0, -trimpath) on a minimal base built
// from scratch, written as one archive that both `docker load` and
// `podman load` accept.
//
//	go run ./cmd/image -o out/nodeboot-manager.tar -tag nodeboot-manager:dev
//
// The archive is an OCI image layout (oci-layout, index.json, blobs/sha256/…)
// that also carries Docker's manifest.json pointing at the same blobs — the
// shape `docker save` writes since Docker 25. Podman and Docker 25+ read the
// OCI layout; older Docker engines read manifest.json. Tools that speak OCI
// (skopeo, crane, containerd's ctr import) read it as oci-archive.
//
// The image: /manager (0755, root-owned), entrypoint /manager, user
// 65532:65532 (distroless's "nonroot"), /etc/passwd and /etc/group naming
// that user, /home/nonroot and a world-writable /tmp. No CA certificates: the
// manager talks to the management cluster with its service account's CA and
// to workload clusters with the CA in their kubeconfig Secrets, and fetches
// nothing else. OCI labels org.opencontainers.image.{source,revision,version,
// created,title} come from the built binary's own build information, so the
// labels and `manager --version` always agree.
//
// Reproducible: the same commit (and toolchain) gives the same image digest.
// Every timestamp is the commit time the toolchain stamped into the binary
// (-buildvcs), or SOURCE_DATE_EPOCH, or 1970 without either; tar entries are
// sorted with fixed owners and modes; gzip carries no name or time.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/nodeboot/nodeboot/internal/version"
)

// User is the numeric user and group the manager runs as.
const User = "65532:65532"

// Options say what to build.
type Options struct {
	// Go is the go command.
	Go string
	// Dir is the module root the binary is built from.
	Dir string
	// Package is the main package, relative to Dir.
	Package string
	// Arch is the target GOARCH (GOOS is linux).
	Arch string
	// Tag names the image in the archive (repository:tag, no digest).
	Tag string
	// Version, when set, overrides the version the binary reports (and the
	// image's version label); otherwise the toolchain's module version.
	Version string
	// Output is the archive path.
	Output string
}

// Result describes the archive written.
type Result struct {
	// Digest is the image manifest's digest: what a registry reports after a push.
	Digest v1.Hash
	// Size is the archive's size in bytes.
	Size int64
	// Info is the build information of the binary in the image.
	Info version.Info
}

func main() {
	o := Options{Package: "./cmd/manager"}
	flag.StringVar(&o.Output, "o", "out/nodeboot-manager.tar", "archive to write")
	flag.StringVar(&o.Tag, "tag", "nodeboot-manager:dev", "image name and tag recorded in the archive")
	flag.StringVar(&o.Arch, "arch", envOr("GOARCH", ""), "target architecture (default: the go command's GOARCH)")
	flag.StringVar(&o.Version, "version", "", "version the binary reports (default: from the toolchain's VCS stamp)")
	flag.StringVar(&o.Go, "go", envOr("GO", "go"), "go command")
	flag.StringVar(&o.Dir, "C", ".", "module root")
	flag.Parse()
	res, err := Build(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %s %s, digest %s, %d bytes\n", o.Output, o.Tag, res.Info.Version, res.Digest, res.Size)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Build compiles the manager and writes the image archive.
func Build(o Options) (*Result, error) {
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Arch == "" {
		out, err := exec.Command(o.Go, "env", "GOARCH").Output()
		if err != nil {
			return nil, fmt.Errorf("go env GOARCH: %w", err)
		}
		o.Arch = strings.TrimSpace(string(out))
	}
	if strings.Contains(o.Tag, "@") || strings.LastIndex(o.Tag, ":") <= strings.LastIndex(o.Tag, "/") {
		return nil, fmt.Errorf("-tag %q: want repository:tag", o.Tag)
	}
	work, err := os.MkdirTemp("", "nodeboot-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "manager")
	if err := compile(o, bin); err != nil {
		return nil, err
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read the binary's build information: %w", err)
	}
	info := version.FromBuildInfo(bi)
	if o.Version != "" {
		info.Version = o.Version
	}
	created, err := sourceTime(info)
	if err != nil {
		return nil, err
	}
	img, err := image(bin, info, bi.Main.Path, o.Arch, created)
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(o.Output), 0o755); err != nil {
		return nil, err
	}
	if err := writeArchive(o.Output, img, o.Tag, created); err != nil {
		return nil, err
	}
	st, err := os.Stat(o.Output)
	if err != nil {
		return nil, err
	}
	return &Result{Digest: digest, Size: st.Size(), Info: info}, nil
}

// compile builds a static, path-free binary: CGO off, -trimpath, symbols
// stripped (build information stays), the VCS stamp when the tree is a
// checkout (-buildvcs=auto: a source tarball without .git builds too).
func compile(o Options, out string) error {
	ldflags := "-s -w -buildid="
	if o.Version != "" {
		ldflags += " -X github.com/nodeboot/nodeboot/internal/version.override=" + o.Version
	}
	cmd := exec.Command(o.Go, "build", "-trimpath", "-buildvcs=auto", "-ldflags", ldflags, "-o", out, o.Package)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.Arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", o.Package, err, b)
	}
	return nil
}

// sourceTime is the commit time, else SOURCE_DATE_EPOCH, else the epoch.
func sourceTime(info version.Info) (time.Time, error) {
	if info.CommitTime != "" {
		t, err := time.Parse(time.RFC3339, info.CommitTime)
		if err != nil {
			return time.Time{}, fmt.Errorf("vcs.time %q: %w", info.CommitTime, err)
		}
		return t.UTC(), nil
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Unix(0, 0).UTC(), nil
}

// image is the base (one layer, from scratch) plus the binary, with the
// config an OCI runtime needs.
func image(bin string, info version.Info, modulePath, arch string, created time.Time) (v1.Image, error) {
	manager, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(manager, created)
	if err != nil {
		return nil, err
	}
	// Compressed once, here: handed gzip bytes, the layer only decompresses
	// them (for its diff ID) instead of compressing on every read.
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(layerTar); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "cmd/image: /manager, /etc/passwd, /etc/group, /home/nonroot, /tmp", Comment: "nodeboot manager " + info.Version},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = arch, "linux"
	cfg.Created = v1.Time{Time: created}
	cfg.Author = ""
	cfg.Config = v1.Config{
		Entrypoint: []string{"/manager"},
		User:       User,
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Labels:     Labels(info, modulePath, created),
	}
	return mutate.ConfigFile(img, cfg)
}

// Labels are the image's OCI annotations-as-labels.
func Labels(info version.Info, modulePath string, created time.Time) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "nodeboot-manager",
		"org.opencontainers.image.description": "nodeboot: a drop-in replacement for Cluster API's kubeadm bootstrap provider",
		"org.opencontainers.image.source":      "https://" + modulePath,
		"org.opencontainers.image.revision":    info.Commit,
		"org.opencontainers.image.version":     info.Version,
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
}

type entry struct {
	name string
	mode int64
	uid  int
	body []byte
	dir  bool
}

// rootfs is the image's only layer, uncompressed.
func rootfs(manager []byte, mtime time.Time) ([]byte, error) {
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, body: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, dir: true},
		{name: "manager", mode: 0o755, body: manager},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	return tarEntries(entries, mtime)
}

func tarEntries(entries []entry, mtime time.Time) ([]byte, error) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime,
			Typeflag: tar.TypeReg, Size: int64(len(e.body)), Format: tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dockerManifest is one entry of Docker's manifest.json.
type dockerManifest struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// writeArchive writes the OCI layout plus Docker's manifest.json as one tar.
func writeArchive(path string, img v1.Image, tag string, mtime time.Time) error {
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	entries := []entry{
		{name: "blobs/", mode: 0o755, dir: true},
		{name: "blobs/sha256/", mode: 0o755, dir: true},
		{name: "oci-layout", mode: 0o644, body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: blob(digest), mode: 0o644, body: manifest},
		{name: blob(configName), mode: 0o644, body: config},
	}
	dm := dockerManifest{Config: blob(configName), RepoTags: []string{tag}}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close() // read to the end: a close error changes nothing read
		if err != nil {
			return err
		}
		entries = append(entries, entry{name: blob(d), mode: 0o644, body: b})
		dm.Layers = append(dm.Layers, blob(d))
	}
	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1,
			Size:      int64(len(manifest)),
			Digest:    digest,
			Platform:  &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture},
			Annotations: map[string]string{
				// containerd and Docker name the loaded image after this.
				"io.containerd.image.name": tag,
				// The OCI layout's reference: the tag alone.
				"org.opencontainers.image.ref.name": tag[strings.LastIndex(tag, ":")+1:],
			},
		}},
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return err
	}
	dmJSON, err := json.Marshal([]dockerManifest{dm})
	if err != nil {
		return err
	}
	entries = append(entries,
		entry{name: "index.json", mode: 0o644, body: indexJSON},
		entry{name: "manifest.json", mode: 0o644, body: dmJSON})
	b, err := tarEntries(entries, mtime)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
