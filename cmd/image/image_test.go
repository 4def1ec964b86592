package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// snapshot copies the repository as it is now (tracked and untracked files
// that are not ignored, and .git, so the build is VCS-stamped) into dir:
// the two builds of TestImage then see the same source even while the
// working tree changes under them.
func snapshot(t *testing.T, dir string) {
	t.Helper()
	root := testenv.ModuleRoot()
	cmd := exec.Command("bash", "-c", `git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp --parents -t "$1" && cp -a .git "$1/"`, "snapshot", dir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
}

// TestImage builds the manager image twice, from two copies of the same
// source at different paths: the archives are byte-identical (so is the
// digest); the archive loads as a Docker archive and as an OCI layout with
// every blob matching its digest; the config runs /manager as 65532 with
// the OCI labels of the commit; and the binary taken out of the layer is
// static and prints that commit with --version.
func TestImage(t *testing.T) {
	tmp := t.TempDir()
	srcA, srcB := filepath.Join(tmp, "a", "src"), filepath.Join(tmp, "b", "nodeboot")
	for _, d := range []string{srcA, srcB} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	snapshot(t, srcA)
	if out, err := exec.Command("cp", "-a", srcA+"/.", srcB).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	const tag = "nodeboot-manager:test"
	build := func(src, out string) *Result {
		res, err := Build(Options{Go: envOr("GO", "go"), Dir: src, Package: "./cmd/manager", Arch: runtime.GOARCH, Tag: tag, Output: out})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	archive := filepath.Join(tmp, "out", "nodeboot-manager.tar")
	res := build(srcA, archive)
	again := build(srcB, filepath.Join(tmp, "again.tar"))
	t.Logf("image %s %s, %d bytes", res.Digest, res.Info.Version, res.Size)
	if res.Digest != again.Digest {
		t.Errorf("same source, two digests: %s and %s", res.Digest, again.Digest)
	}
	a, _ := os.ReadFile(archive)
	b, _ := os.ReadFile(filepath.Join(tmp, "again.tar"))
	if !bytes.Equal(a, b) {
		t.Errorf("same source, different archives")
	}

	head, err := exec.Command("git", "-C", srcA, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	if strings.TrimSuffix(res.Info.Commit, "-dirty") != commit || !strings.HasPrefix(res.Info.Version, "v") {
		t.Errorf("build information %+v, want commit %s and a module version", res.Info, commit)
	}

	// The archive's top level: an OCI layout plus Docker's manifest.json.
	names := tarNames(t, a)
	for _, want := range []string{"oci-layout", "index.json", "manifest.json", "blobs/sha256/" + res.Digest.Hex} {
		if !names[want] {
			t.Errorf("archive lacks %s", want)
		}
	}

	// Docker's reading: manifest.json and its RepoTags.
	dockerImg, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatalf("read as a Docker archive: %v", err)
	}
	// Docker's manifest.json has no manifest of its own (a loader writes
	// one): the config and the layers are the same blobs.
	if d, _ := dockerImg.ConfigName(); d.Hex == "" || !names["blobs/sha256/"+d.Hex] {
		t.Errorf("Docker archive config %s is not one of the archive's blobs", d)
	}
	if ls, err := dockerImg.Layers(); err != nil || len(ls) != 1 {
		t.Errorf("Docker archive layers: %v (%d)", err, len(ls))
	} else if d, _ := ls[0].Digest(); !names["blobs/sha256/"+d.Hex] {
		t.Errorf("Docker archive layer %s is not one of the archive's blobs", d)
	}
	if _, err := tarball.ImageFromPath(archive, mustTag(t, tag)); err != nil {
		t.Errorf("the archive does not carry the tag %s: %v", tag, err)
	}

	// OCI's reading: the layout, validated blob by blob.
	dir := filepath.Join(tmp, "layout")
	untar(t, a, dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("read as an OCI layout: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index: %v, %+v", err, im)
	}
	desc := im.Manifests[0]
	if desc.Digest != res.Digest || desc.Annotations["io.containerd.image.name"] != tag || desc.Annotations["org.opencontainers.image.ref.name"] != "test" ||
		desc.Platform == nil || desc.Platform.OS != "linux" || desc.Platform.Architecture != runtime.GOARCH {
		t.Errorf("index descriptor %+v", desc)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("the OCI image does not validate: %v", err)
	}

	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/manager" || len(c.Cmd) != 0 || c.User != "65532:65532" || cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("config: entrypoint %q cmd %q user %q platform %s/%s", c.Entrypoint, c.Cmd, c.User, cfg.OS, cfg.Architecture)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.source":   "https://github.com/nodeboot/nodeboot",
		"org.opencontainers.image.revision": res.Info.Commit,
		"org.opencontainers.image.version":  res.Info.Version,
		"org.opencontainers.image.created":  cfg.Created.UTC().Format("2006-01-02T15:04:05Z07:00"),
	}
	for k, v := range wantLabels {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	// The commit time, not the build time.
	ct, err := exec.Command("git", "-C", srcA, "log", "-1", "--format=%cI").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Created.UTC(), mustTime(t, strings.TrimSpace(string(ct))); !got.Equal(want) {
		t.Errorf("created %s, want the commit time %s", got, want)
	}

	// The one layer: the rootfs, fixed owners and modes.
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v (%d)", err, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	wantEntries := map[string]string{
		"etc/": "dir 0755 0", "etc/group": "file 0644 0", "etc/passwd": "file 0644 0",
		"home/": "dir 0755 0", "home/nonroot/": "dir 0700 65532", "manager": "file 0755 0", "tmp/": "dir 1777 0",
	}
	var manager []byte
	tr := tar.NewReader(rc)
	var order []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, h.Name)
		kind := "file"
		if h.Typeflag == tar.TypeDir {
			kind = "dir"
		}
		got := fmt.Sprintf("%s %04o %d", kind, h.Mode, h.Uid)
		if wantEntries[h.Name] != got || !h.ModTime.Equal(cfg.Created.Time) {
			t.Errorf("layer entry %s: %s at %s, want %s at %s", h.Name, got, h.ModTime, wantEntries[h.Name], cfg.Created.Time)
		}
		if h.Name == "manager" {
			manager, _ = io.ReadAll(tr)
		}
	}
	if len(order) != len(wantEntries) {
		t.Errorf("layer entries %q", order)
	}
	bin := filepath.Join(tmp, "manager")
	if err := os.WriteFile(bin, manager, 0o755); err != nil {
		t.Fatal(err)
	}
	// Static: no program interpreter (the ELF would need a libc in the image).
	if bytes.Contains(manager[:min(len(manager), 4096)], []byte("/lib64/ld-linux")) || bytes.Contains(manager[:min(len(manager), 4096)], []byte("/lib/ld-")) {
		t.Errorf("/manager is dynamically linked")
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("/manager --version: %v\n%s", err, out)
	}
	want := "manager " + res.Info.Version + " (commit " + res.Info.Commit + ", " + runtime.Version() + ", linux/" + runtime.GOARCH + ")\n"
	if string(out) != want {
		t.Errorf("/manager --version = %q, want %q", out, want)
	}
}

// TestDockerfile: the Dockerfile for people with a container engine builds
// what cmd/image builds: a static binary at /manager, run as 65532.
func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, re := range []string{
		`(?m)^\s+CGO_ENABLED=0 GOOS=linux .*go build -trimpath .*-o /workspace/manager \./cmd/manager$`,
		`(?m)^COPY --from=builder /workspace/manager /manager$`,
		`(?m)^USER 65532:65532$`,
		`(?m)^ENTRYPOINT \["/manager"\]$`,
		`(?m)^LABEL org\.opencontainers\.image\.source=`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("Dockerfile does not match %s", re)
		}
	}
	// No registry host: the images are build arguments.
	if regexp.MustCompile(`(?m)^FROM [^$]`).MatchString(s) {
		t.Errorf("Dockerfile names a base image; use the builder_image / base_image arguments")
	}
}

func TestTagValidation(t *testing.T) {
	for _, tag := range []string{"nodeboot-manager", "host:5000/nodeboot-manager", "x@sha256:00"} {
		if _, err := Build(Options{Tag: tag, Arch: "amd64"}); err == nil || !strings.Contains(err.Error(), "repository:tag") {
			t.Errorf("tag %q: %v", tag, err)
		}
	}
}

func tarNames(t *testing.T, b []byte) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
	}
}

func untar(t *testing.T, b []byte, dir string) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustTag(t *testing.T, s string) *name.Tag {
	t.Helper()
	tag, err := name.NewTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return &tag
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UTC()
}
