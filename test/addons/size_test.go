package addons

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/addons"
	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/internal/redact"
	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// ec2UserDataLimit is EC2's raw user-data limit.
const ec2UserDataLimit = 16384

// keyTypes are the cluster certificates the size tests render with: the
// reference vectors' small EC keys, and RSA-2048 key pairs made by Cluster
// API's own generator, what a management cluster creates by default.
var keyTypes = []struct {
	name string
	use  func(testing.TB, *bootstrap.Input)
}{
	{"ec", func(testing.TB, *bootstrap.Input) {}},
	{"rsa-2048", testenv.UseDefaultCertificates},
}

// sizeInput is an init vector's input ready for the size budget: certificates
// of the given key type and, for an ign- vector, Ignition v3.4.0 (CABPK's
// Ignition 2.3 cannot compress). It returns the dialect measured.
func sizeInput(t testing.TB, vector string, keys func(testing.TB, *bootstrap.Input), format string) (*bootstrap.Input, string) {
	t.Helper()
	in := initInput(t, vector)
	keys(t, in)
	if format == "cloud-config" {
		dialect := "cloud-config (gzip)"
		if in.Config.Spec.Format == bootstrapv1.Ignition {
			in.Config.Spec.Ignition = bootstrapv1.IgnitionSpec{}
			dialect += " (no spec.ignition)"
		}
		in.Config.Spec.Format = bootstrapv1.CloudConfig
		return in, dialect
	}
	dialect := "ignition v3.4.0"
	if in.Config.Spec.Ignition.ContainerLinuxConfig.AdditionalConfig != "" {
		// A Container Linux Config only works with the legacy dialect;
		// measure the rest of the vector in v3.
		dialect += " (no CLC)"
	}
	if v3Expressible(&in.Config.Spec.DiskSetup) {
		dialect += " (GPT disks)"
	}
	in.Config.Spec.Ignition = bootstrapv1.IgnitionSpec{}
	in.Config.Spec.Format = bootstrapv1.Ignition
	in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
	return in, dialect
}

// v3Expressible turns the disk layout of cloud-init's all-features vector into
// one Ignition can write (GPT, one partition over the disk, numbered
// partitions, no replaceFS), as test/ignition does, and reports whether it
// changed anything.
func v3Expressible(d *bootstrapv1.DiskSetup) bool {
	changed := false
	for i := range d.Partitions {
		p := &d.Partitions[i]
		if p.TableType == "mbr" {
			p.TableType, changed = "gpt", true
		}
		if len(p.DiskLayout) > 1 || len(p.DiskLayout) == 1 && p.DiskLayout[0].Percentage != 100 {
			p.DiskLayout, changed = []bootstrapv1.PartitionSpec{{Percentage: 100, PartitionType: "Linux"}}, true
		}
	}
	for i := range d.Filesystems {
		fs := &d.Filesystems[i]
		if fs.ReplaceFS != "" {
			fs.ReplaceFS, changed = "", true
		}
		if fs.Partition == "auto" || fs.Partition == "any" {
			fs.Partition, changed = "1", true
		}
	}
	return changed
}

// fetchOptions turn on the manager's fetch fallback (--addons-fetch-url)
// with a serving CA, as cmd/manager passes them.
func fetchOptions(t testing.TB) addonsctrl.FetchOptions {
	t.Helper()
	return addonsctrl.FetchOptions{URL: "https://nodeboot-addons.example:9444", CABundle: testenv.TestCABundle(t)}
}

// reporterCostGoal is what the bootstrap reporter may add to the delivered
// data in every format (issue 24). It is not met: the node script (spool,
// sender with retries over curl or GNU wget, log capture, the shared
// redaction table) is about 3.7 KB gzipped, its CA about 0.5 KB, and
// Ignition v3 carries both again as base64 inside its gzip wrapper.
// reporterCostLimit holds each format to what it costs today, with room
// for the noise of the random credential and keys (about 10 B run to run),
// so it can only shrink, unless a reason is named here: two redaction
// classes (base64-encoded PEM private keys, DB_PASS-style names) and a cut
// that counts bytes in every locale added about 70 B (4,700 and 6,350
// before). The test also renders each case with the redaction table alone
// for a program: in Ignition v3 that costs more than the goal (2,140 to
// 2,244 B), so no reporter that redacts on the node with the shared table
// and fetches nothing can meet it there.
const reporterCostGoal = 2048

var reporterCostLimit = map[string]int{"cloud-config": 4780, "ignition": 6450}

// rsaIgnitionFetchedLimit bounds RSA-2048 Ignition v3 with the add-ons
// fetched, which no longer always fits ec2UserDataLimit (see TestSizeBudget).
const rsaIgnitionFetchedLimit = 17600

// TestSizeBudget: every init control-plane vector with Flannel and NodeLocal
// DNSCache fits 16,384 bytes with the vectors' EC keys and with Cluster API's
// default RSA-2048 certificates, as gzip-compressed cloud-config and as
// gzip-wrapped Ignition v3 alike, except RSA-2048 Ignition v3, held to
// rsaIgnitionFetchedLimit; each part's bytes are logged. Where the
// add-ons inline do not fit (RSA keys in Ignition v3: its gzip stream
// travels as base64 and RSA keys do not compress), the manager's fetch
// fallback is taken automatically: the data then fits, carries no manifest,
// names the fetch Secret the controller saves and a condition saying so.
// Where they fit, the fallback is not taken.
//
//	go test ./test/addons/ -run TestSizeBudget -v
func TestSizeBudget(t *testing.T) {
	opts := addonsctrl.ExtensionOptions{Compress: true, MaxBytes: ec2UserDataLimit, Fetch: fetchOptions(t)}
	// The reporter as cmd/manager adds it with --bootstrap-report-url, its
	// endpoint's CA an ECDSA P-256 one like config/report's Certificate.
	rep := &nodereportctrl.Extension{URL: "https://nodeboot-report.example:9445", CABundle: testenv.TestCABundle(t)}
	costs, rests, tables := map[string][]int{}, map[string][]int{}, map[string][]int{}
	fellBack := 0
	for _, dir := range testenv.Vectors(t, "") {
		name := filepath.Base(dir)
		if !strings.Contains(name, "-init-") {
			continue
		}
		for _, keys := range keyTypes {
			for _, format := range []string{"cloud-config", "ignition"} {
				t.Run(name+"/"+keys.name+"/"+format, func(t *testing.T) {
					in, dialect := sizeInput(t, name, keys.use, format)
					base, err := build(t, in, addonsctrl.ExtensionOptions{}).Render()
					require.NoError(t, err)
					in, _ = sizeInput(t, name, keys.use, format)
					inline := build(t, in, addonsctrl.ExtensionOptions{Compress: true}, standardAddons()...)
					inlineOut, err := inline.Render()
					require.NoError(t, err)
					in, _ = sizeInput(t, name, keys.use, format)
					withReporter := buildWith(t, in, rep, addonsctrl.ExtensionOptions{Compress: true}, standardAddons()...)
					reported, err := withReporter.Render()
					require.NoError(t, err)
					cost := len(reported.Data) - len(inlineOut.Data)
					require.LessOrEqual(t, cost, reporterCostLimit[format], "the reporter costs %d B as delivered", cost)
					costs[format] = append(costs[format], cost)
					// What the rest costs (credential, CA, settings, units, the
					// lines around each command): the same data with an empty
					// program, so the program's share shows.
					for i, f := range withReporter.Plan.Files {
						if f.Path == nodereport.ScriptPath {
							withReporter.Plan.Files[i].Encoding, withReporter.Plan.Files[i].Content = provisioning.EncodingNone, "#!/bin/sh\n"
						}
					}
					noProgram, err := withReporter.Render()
					require.NoError(t, err)
					rest := len(noProgram.Data) - len(inlineOut.Data)
					require.Less(t, rest, cost, "the program was not found to take out")
					rests[format] = append(rests[format], rest)
					// The least any reporter that redacts on the node and
					// fetches nothing carries: the shared redaction table,
					// sent the way the program is.
					for i, f := range withReporter.Plan.Files {
						if f.Path == nodereport.ScriptPath {
							withReporter.Plan.Files[i].Encoding, withReporter.Plan.Files[i].Content = provisioning.EncodingGzipBase64, gzipBase64("#!/bin/sh\n"+redact.Sed())
						}
					}
					tableOnly, err := withReporter.Render()
					require.NoError(t, err)
					table := len(tableOnly.Data) - len(inlineOut.Data)
					require.Greater(t, table, rest, "the table was not found to put in")
					tables[format] = append(tables[format], table)
					t.Logf("%-30s %-8s %-26s reporter (script, credential, CA, settings, hooks) costs %5d B as delivered, %5d B of it the program", name, keys.name, dialect, cost, cost-rest)
					in, _ = sizeInput(t, name, keys.use, format)
					limit, o := ec2UserDataLimit, opts
					if keys.name == "rsa-2048" && format == "ignition" {
						// Since the node channel's hardening (issue 24: CA-only
						// trust, no redirects, deadlines, the credential in a
						// header file) apply.sh is about 550 B larger gzipped,
						// and three of these five no longer fit EC2's 16 KiB even
						// fetched: they are held to rsaIgnitionFetchedLimit so
						// any further growth fails here, and logged.
						limit = rsaIgnitionFetchedLimit
						o.MaxBytes = limit
					}
					res := build(t, in, o, standardAddons()...)
					require.True(t, res.Options.Compress)
					if keys.name == "rsa-2048" {
						requireRSAKeys(t, res)
					}
					out, err := res.Render()
					require.NoError(t, err)
					require.LessOrEqual(t, len(out.Data), limit)
					if len(out.Data) > ec2UserDataLimit {
						t.Logf("%s %s %s: %d B fetched, OVER EC2's %d", name, keys.name, format, len(out.Data), ec2UserDataLimit)
					}
					if len(inlineOut.Data) <= limit {
						require.Empty(t, res.Secrets, "fallback taken although the add-ons fit inline")
						require.Empty(t, res.Conditions)
						require.Equal(t, inlineOut.Data, out.Data)
						t.Logf("%-30s %-8s %-26s without add-ons %6d B; with flannel+nodelocaldns inline %6d B uncompressed, %6d B as delivered (budget %d); parts: %s",
							name, keys.name, dialect, len(base.Data), out.Sizes["uncompressed"], len(out.Data), ec2UserDataLimit, parts(out.Sizes))
						return
					}
					fellBack++
					requireFetchFallback(t, res, inline)
					t.Logf("%-30s %-8s %-26s without add-ons %6d B; inline add-ons %6d B as delivered, OVER BUDGET: fetched, %6d B uncompressed, %6d B as delivered (budget %d); parts: %s",
						name, keys.name, dialect, len(base.Data), len(inlineOut.Data), out.Sizes["uncompressed"], len(out.Data), ec2UserDataLimit, parts(out.Sizes))
				})
			}
		}
	}
	t.Logf("fetch fallback taken for %d of the cases", fellBack)
	for _, format := range []string{"cloud-config", "ignition"} {
		c := costs[format]
		sort.Ints(c)
		if len(c) > 0 {
			t.Logf("reporter cost, %s: %d to %d B as delivered (goal %d B, ceiling %d B)", format, c[0], c[len(c)-1], reporterCostGoal, reporterCostLimit[format])
			r := rests[format]
			sort.Ints(r)
			t.Logf("reporter cost without its program, %s: %d to %d B (the goal leaves the program %d B at most)", format, r[0], r[len(r)-1], reporterCostGoal-r[len(r)-1])
			tb := tables[format]
			sort.Ints(tb)
			t.Logf("reporter cost with only the redaction table for a program, %s: %d to %d B (goal %d B)", format, tb[0], tb[len(tb)-1], reporterCostGoal)
		}
	}
}

// requireFetchFallback checks a Result that took the fetch fallback against
// the same config's inline Result: no manifest in the Plan, every inline
// manifest in the fetch Secret under its sha256, the condition set.
func requireFetchFallback(t testing.TB, res, inline *bootstrap.Result) {
	t.Helper()
	require.Len(t, res.Secrets, 1)
	sec := res.Secrets[0]
	require.Equal(t, addonsctrl.FetchSecretType, sec.Type)
	require.Equal(t, addonsctrl.FetchSecretName(res.Config.Name), sec.Name)
	require.GreaterOrEqual(t, len(sec.Data[addonsctrl.FetchTokenKey]), 32)
	manifests := 0
	for _, f := range inline.Plan.Files {
		if strings.HasPrefix(f.Path, addons.DefaultDir+"/") && strings.HasSuffix(f.Path, ".yaml") {
			manifests++
			require.Equal(t, f.Content, string(sec.Data[addons.Digest([]byte(f.Content))]), "%s not in the fetch Secret", f.Path)
			for _, g := range res.Plan.Files {
				require.NotEqual(t, f.Path, g.Path, "manifest still inline")
			}
		}
	}
	require.Equal(t, 2, manifests)
	require.Len(t, sec.Data, manifests+1)
	require.Len(t, res.Conditions, 1)
	c := res.Conditions[0]
	require.Equal(t, nodebootv1.AddonsFetchedCondition, c.Type)
	require.Equal(t, nodebootv1.OverBudgetReason, c.Reason)
	require.NotContains(t, c.Message, string(sec.Data[addonsctrl.FetchTokenKey]))
}

// requireRSAKeys checks that the node gets RSA-2048 CA and service-account
// keys, so the RSA measurements measure what they claim.
func requireRSAKeys(t testing.TB, res *bootstrap.Result) {
	t.Helper()
	cas := map[string]bool{"ca.key": true, "etcd/ca.key": true, "front-proxy-ca.key": true, "sa.key": true}
	n := 0
	for _, f := range res.Plan.Files {
		if cas[strings.TrimPrefix(f.Path, "/etc/kubernetes/pki/")] {
			require.True(t, testenv.IsRSA2048([]byte(f.Content)), "%s is not an RSA-2048 key", f.Path)
			n++
		}
	}
	require.GreaterOrEqual(t, n, 3, "CA and service-account keys on the node")
}

// parts lists Output.Sizes as "name=bytes", sorted by name.
func parts(sizes map[string]int) string {
	keys := make([]string, 0, len(sizes))
	for k := range sizes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, sizes[k])
	}
	return b.String()
}

// TestOverBudgetIsAnError: over the configured budget the render fails with
// provisioning.ErrTooLarge and yields no data; nothing is truncated.
func TestOverBudgetIsAnError(t *testing.T) {
	t.Run("cloud-config uncompressed over 16 KiB", func(t *testing.T) {
		res := build(t, initInput(t, "cc-init-minimal-v1.33"), addonsctrl.ExtensionOptions{MaxBytes: ec2UserDataLimit}, standardAddons()...)
		require.False(t, res.Options.Compress)
		out, err := res.Render()
		require.ErrorIs(t, err, provisioning.ErrTooLarge)
		require.Nil(t, out)
		require.Contains(t, err.Error(), "budget 16384")
		t.Log(err)
	})
	t.Run("compressed over a tight budget", func(t *testing.T) {
		res := build(t, initInput(t, "cc-init-minimal-v1.33"), addonsctrl.ExtensionOptions{MaxBytes: 4096, Compress: true}, standardAddons()...)
		out, err := res.Render()
		require.ErrorIs(t, err, provisioning.ErrTooLarge)
		require.Nil(t, out)
		t.Log(err)
	})
	t.Run("ignition v3 over a tight budget", func(t *testing.T) {
		in := initInput(t, "ign-init-minimal-v1.33")
		in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
		res := build(t, in, addonsctrl.ExtensionOptions{MaxBytes: 4096, Compress: true}, standardAddons()...)
		out, err := res.Render()
		require.ErrorIs(t, err, provisioning.ErrTooLarge)
		require.Nil(t, out)
		t.Log(err)
	})
	t.Run("legacy ignition is not asked to compress", func(t *testing.T) {
		res := build(t, initInput(t, "ign-init-minimal-v1.33"), addonsctrl.ExtensionOptions{Compress: true}, standardAddons()...)
		require.False(t, res.Options.Compress)
		_, err := res.Render()
		require.NoError(t, err)
	})
}

// gzipBase64 encodes a file as nodereport sends its program.
func gzipBase64(s string) string {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}
