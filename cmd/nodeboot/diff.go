package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
)

type diffFlags struct {
	inputFlags
	against string
	unified bool
}

// diff renders the input's KubeadmConfigs as render does and compares each
// with its bootstrap data Secret, as `kubectl get secret -o yaml` prints it.
// One line per config on standard output (identical, differs, cannot render,
// or why it could not be compared), then a summary; exit 0 only when every
// config is identical.
func diff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f diffFlags
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.add(fs, "compare only the KubeadmConfig with this name (default: every KubeadmConfig of the input)")
	fs.StringVar(&f.against, "against", "", "the bootstrap data Secret(s) to compare with, as kubectl get secret -o yaml prints them (required)")
	fs.BoolVar(&f.unified, "diff", false, "print a unified diff of the decoded data, with private keys, tokens and passwords redacted")
	if !f.parse("diff", fs, args, stderr) {
		return 2
	}
	if f.against == "" {
		fmt.Fprintln(stderr, "nodeboot diff: --against SECRET.yaml is required")
		return 2
	}
	if f.addons.MaxBytes < 0 {
		fmt.Fprintln(stderr, "nodeboot diff: --addons-max-bytes must not be negative")
		return 2
	}
	if f.file == "-" && f.against == "-" {
		fmt.Fprintln(stderr, "nodeboot diff: -f and --against cannot both read standard input")
		return 2
	}
	input, err := readInput(f.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "nodeboot diff: %v\n", err)
		return 1
	}
	// The same bounded reader as -f: /dev/zero or an endless pipe stops
	// at the limit instead of exhausting memory.
	secretsYAML, err := readSource("--against", f.against, stdin, manifest.MaxInputBytes, "manifest.MaxInputBytes")
	if err != nil {
		fmt.Fprintf(stderr, "nodeboot diff: %v\n", err)
		return 1
	}
	secrets, err := readSecrets(secretsYAML)
	if err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "nodeboot diff: %s: %s\n", f.against, l)
		}
		return 1
	}
	p, err := parseInput(input, f.addons)
	var cfgs []*bootstrapv1.KubeadmConfig
	if err == nil {
		cfgs, err = p.configs(f.name)
	}
	if err != nil {
		for _, l := range problemLines(err) {
			fmt.Fprintf(stderr, "nodeboot diff: %s\n", l)
		}
		return 1
	}
	identical := 0
	for _, cfg := range cfgs {
		if compareConfig(p, cfg, pickSecret(secrets, cfg, len(cfgs) == 1), f, stdout, stderr) {
			identical++
		}
	}
	fmt.Fprintf(stdout, "identical: %d/%d\n", identical, len(cfgs))
	if identical != len(cfgs) {
		return 1
	}
	return 0
}

// readSecrets reads every Secret of the file: single objects, several
// documents, or a List as kubectl prints several objects. A List inside a
// List is refused: kubectl never prints one, and reading each level again
// would cost time quadratic in the nesting.
func readSecrets(raw []byte) ([]*corev1.Secret, error) {
	var out []*corev1.Secret
	var add func(doc []byte, inList bool) error
	add = func(doc []byte, inList bool) error {
		var tm struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return fmt.Errorf("not a Kubernetes object: %w", err)
		}
		switch {
		case inList && (tm.Kind == "List" || strings.HasSuffix(tm.Kind, "List")):
			return fmt.Errorf("a %s inside a List is not read (kubectl never prints one)", tm.Kind)
		case tm.Kind == "List" || strings.HasSuffix(tm.Kind, "List") && tm.APIVersion == "v1":
			for i, item := range tm.Items {
				if err := add(item, true); err != nil {
					return fmt.Errorf("items[%d]: %w", i, err)
				}
			}
			return nil
		case tm.Kind != "Secret" || tm.APIVersion != "v1":
			return fmt.Errorf("%s %s is not a Secret", tm.APIVersion, tm.Kind)
		}
		s := &corev1.Secret{}
		if err := yaml.Unmarshal(doc, s); err != nil {
			return fmt.Errorf("Secret: %w", err)
		}
		if s.Namespace == "" {
			s.Namespace = "default"
		}
		out = append(out, s)
		return nil
	}
	if err := manifest.Documents(bytes.NewReader(raw), func(doc []byte) error { return add(doc, false) }); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Secret in the file")
	}
	return out, nil
}

// pickSecret is cfg's data Secret: the only Secret when one config is
// compared with one Secret, else the one in cfg's namespace named by
// status.dataSecretName, after cfg, or owned by it (as CABPK writes it).
func pickSecret(secrets []*corev1.Secret, cfg *bootstrapv1.KubeadmConfig, single bool) *corev1.Secret {
	if single && len(secrets) == 1 {
		return secrets[0]
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	for _, s := range secrets {
		if s.Namespace != ns {
			continue
		}
		if s.Name == cfg.Status.DataSecretName || s.Name == cfg.Name {
			return s
		}
		for _, o := range s.OwnerReferences {
			if o.Kind == "KubeadmConfig" && o.Name == cfg.Name {
				return s
			}
		}
	}
	return nil
}

// bootstrapData checks that s is a bootstrap data Secret and returns its
// decoded value and format.
func bootstrapData(s *corev1.Secret) (value []byte, format string, err error) {
	ref := "Secret " + s.Namespace + "/" + s.Name
	const want = "want a Secret of type " + string(clusterv1.ClusterSecretType) + " with data.value and data.format"
	if s.Type != clusterv1.ClusterSecretType {
		return nil, "", fmt.Errorf("%s: type: %q: not bootstrap data (%s)", ref, s.Type, want)
	}
	value, ok := s.Data["value"]
	if !ok {
		return nil, "", fmt.Errorf("%s: data.value: not found: not bootstrap data (%s)", ref, want)
	}
	f, ok := s.Data["format"]
	if !ok {
		return nil, "", fmt.Errorf("%s: data.format: not found: not bootstrap data (%s)", ref, want)
	}
	return value, string(f), nil
}

// compareConfig prints cfg's row (and, with --diff, its unified diff) and
// reports whether it is identical.
func compareConfig(p *parsedInput, cfg *bootstrapv1.KubeadmConfig, s *corev1.Secret, f diffFlags, stdout, stderr io.Writer) bool {
	ref := configRef(cfg)
	if s == nil {
		fmt.Fprintf(stdout, "%s: error: no bootstrap data Secret for it in %s\n", ref, f.against)
		return false
	}
	stored, storedFormat, err := bootstrapData(s)
	if err != nil {
		fmt.Fprintf(stdout, "%s: error: %v\n", ref, err)
		return false
	}
	out, err := p.renderConfig(cfg, f.strict)
	if err != nil {
		for _, l := range problemLines(err) {
			fmt.Fprintf(stdout, "%s: cannot render: %s\n", ref, l)
		}
		return false
	}
	for _, l := range warningLines(ref, out.Warnings) {
		fmt.Fprintln(stderr, l)
	}
	c := compareData(ref, "Secret "+s.Namespace+"/"+s.Name, stored, storedFormat, out.Data, out.Format, f.unified, secretFiles(cfg))
	if c.identical {
		fmt.Fprintf(stdout, "%s: identical\n", ref)
		return true
	}
	for _, d := range c.details {
		fmt.Fprintf(stdout, "%s: %s\n", ref, d)
	}
	fmt.Fprint(stdout, c.unified)
	return false
}

// dataComparison is stored bootstrap data compared with a rendering, as
// diff and verify print it.
type dataComparison struct {
	identical bool
	// details are the "differs: ..." lines, decoded and redacted.
	details []string
	// unified is the redacted unified diff, when asked for.
	unified string
	// agree is how many leading decoded lines both sides share.
	agree int
}

// secretFiles are the paths of cfg's files whose content comes from a
// Secret (contentFrom): a cloud provider's credentials, a registry's
// password. diff and verify never show what those hold, whatever the path.
func secretFiles(cfg *bootstrapv1.KubeadmConfig) map[string]bool {
	out := map[string]bool{}
	for _, f := range cfg.Spec.Files {
		if f.ContentFrom.Secret.Name != "" {
			out[f.Path] = true
		}
	}
	return out
}

// compareData compares the stored value and format of secretName with what
// was rendered for ref; secret names files never shown (secretFiles).
func compareData(ref, secretName string, stored []byte, storedFormat string, rendered []byte, renderedFormat string, unified bool, secret map[string]bool) dataComparison {
	if bytes.Equal(stored, rendered) && storedFormat == renderedFormat {
		return dataComparison{identical: true, agree: -1}
	}
	var c dataComparison
	if storedFormat != renderedFormat {
		c.details = append(c.details, fmt.Sprintf("differs: format: %s has %q, rendered %q", secretName, storedFormat, renderedFormat))
	}
	old, cur := normalize(stored, rendered)
	oldR, curR := redactLines(old, secret), redactLines(cur, secret)
	i := 0
	for i < len(old) && i < len(cur) && old[i] == cur[i] {
		i++
	}
	c.agree = i
	if !bytes.Equal(stored, rendered) {
		if i == len(old) && i == len(cur) {
			c.details = append(c.details, "differs: the same JSON document, formatted differently")
		} else {
			d := fmt.Sprintf("differs: line %d: %s has %s, rendered %s", i+1, secretName, lineAt(oldR, i), lineAt(curR, i))
			if i < len(oldR) && i < len(curR) && oldR[i] == curR[i] {
				d += " (they differ in a redacted value)"
			}
			c.details = append(c.details, d)
		}
	}
	if unified {
		c.unified = unifiedDiff(old, cur, oldR, curR, secretName+" (stored)", ref+" (rendered)")
	}
	return c
}

func lineAt(lines []string, i int) string {
	if i >= len(lines) {
		return "<end of data>"
	}
	return strconv.Quote(lines[i])
}

// normalize splits both sides into lines; Ignition (JSON on both sides) is
// indented first so lines are readable and diffs local.
func normalize(a, b []byte) ([]string, []string) {
	if json.Valid(a) && json.Valid(b) {
		var ia, ib bytes.Buffer
		if json.Indent(&ia, a, "", "  ") == nil && json.Indent(&ib, b, "", "  ") == nil {
			a, b = ia.Bytes(), ib.Bytes()
		}
	}
	return strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
}

const redacted = "<redacted>"

var (
	pemBegin = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)
	pemEnd   = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY-----`)
	// pemInline is a private key on one line: a quoted string with \n escapes.
	pemInline = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----`)
	token     = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)
	// tokenKey is any kubeadm token: value, well-formed or not, also inside
	// a percent-encoded data: URL.
	tokenKey = regexp.MustCompile(`((?i:token)(?::|%3A)(?:\s|%20)+)([^\s%"',]+)`)
	password = regexp.MustCompile(`^(\s*(?:-\s+)?"?(?:passwd|password_hash|passwordHash|hashed_passwd|plain_text_passwd)"?\s*:\s*)[^\s{\[].*$`)
	// yamlPath and jsonPath take a file's whole path, blanks and escapes
	// included (filePath unquotes it), so that a Secret's file is known by
	// the path secretFiles has for it.
	yamlPath = regexp.MustCompile(`^\s*(?:-\s+)?path:\s*(.*?)\s*$`)
	yamlBody = regexp.MustCompile(`^(\s*)content:\s*(.*)$`)
	jsonPath = regexp.MustCompile(`^\s*"path":\s*("(?:[^"\\]|\\.)*")`)
	jsonStr  = regexp.MustCompile(`^(\s*"[^"]+":\s*)("(?:[^"\\]|\\.)*")(,?)$`)
	// keyPath is a file whose content is a private key whatever its encoding.
	// Key files, and credential files (the bootstrap reporter's token, the
	// add-on step's fetch credentials), whose content is never shown.
	keyPath = regexp.MustCompile(`(?i)(\.key|[-_.]key\.pem|private[^/]*|/token|/` + addons.CredentialFilePrefix + `[0-9a-f]{16})$`)
)

// redactLines returns lines with secrets replaced by <redacted>, line for
// line: PEM private key blocks, contents of key files (whatever their
// encoding, data: URLs included), bootstrap tokens and passwords.
func redactLines(lines []string, secret map[string]bool) []string {
	hidden := func(path string) bool { return keyPath.MatchString(path) || secret[path] }
	out := make([]string, len(lines))
	inPEM := false
	curPath := ""
	blockIndent := -1 // indentation of a key file's content: block, or -1
	for i, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		switch {
		case inPEM:
			if pemEnd.MatchString(l) {
				inPEM = false
			}
			l = l[:indent] + redacted
		case blockIndent >= 0 && (indent > blockIndent || strings.TrimSpace(l) == ""):
			if strings.TrimSpace(l) != "" {
				l = l[:indent] + redacted
			}
		default:
			blockIndent = -1
			if m := yamlPath.FindStringSubmatch(l); m != nil {
				curPath = filePath(m[1])
			}
			if m := jsonPath.FindStringSubmatch(l); m != nil {
				curPath = filePath(m[1])
			}
			switch {
			case pemInline.MatchString(l):
				l = pemInline.ReplaceAllString(l, redacted)
			case pemBegin.MatchString(l):
				inPEM = true
				l = l[:indent] + redacted
			}
			if m := yamlBody.FindStringSubmatch(l); m != nil && hidden(curPath) && m[2] != "" {
				if strings.HasPrefix(m[2], "|") || strings.HasPrefix(m[2], ">") {
					blockIndent = len(m[1])
				} else {
					l = m[1] + "content: " + redacted
				}
			}
			if m := jsonStr.FindStringSubmatch(l); m != nil && secretJSONString(m[2], hidden(curPath)) {
				l = m[1] + `"` + redacted + `"` + m[3]
			}
			l = password.ReplaceAllString(l, "${1}"+redacted)
		}
		l = tokenKey.ReplaceAllString(l, "${1}"+redacted)
		out[i] = token.ReplaceAllString(l, redacted)
	}
	return out
}

// filePath is a path as YAML or JSON writes it: plain, "double-quoted"
// (escapes as JSON's) or 'single-quoted' (a quote in it doubled).
func filePath(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if p, err := strconv.Unquote(v); err == nil {
			return p
		}
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// secretJSONString: an Ignition file source (or any string) that holds a
// private key, encoded or not, or the contents of a hidden file.
func secretJSONString(quoted string, hiddenFile bool) bool {
	s, err := strconv.Unquote(quoted)
	if err != nil {
		return false
	}
	if !strings.HasPrefix(s, "data:") {
		return pemBegin.MatchString(s)
	}
	if hiddenFile {
		return true
	}
	du, err := dataurl.DecodeString(s)
	if err != nil {
		return strings.Contains(s, "PRIVATE") // undecodable: err on the safe side
	}
	return pemBegin.Match(du.Data)
}

type edit struct {
	op   byte // ' ', '-' or '+'
	a, b int  // line index in old (for ' ' and '-') and new (for ' ' and '+')
}

// maxEditDistance bounds the Myers search; beyond it the middle is reported
// as replaced wholesale.
const maxEditDistance = 4000

// diffLines is Myers' O((N+M)D) line diff, after trimming the common prefix
// and suffix.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for i := 0; i < pre; i++ {
		out = append(out, edit{' ', i, i})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre)...)
	for i := 0; i < suf; i++ {
		out = append(out, edit{' ', len(a) - suf + i, len(b) - suf + i})
	}
	return out
}

func myers(a, b []string, off int) []edit {
	n, m := len(a), len(b)
	wholesale := func() []edit {
		var out []edit
		for i := range a {
			out = append(out, edit{'-', off + i, off})
		}
		for j := range b {
			out = append(out, edit{'+', off + n, off + j})
		}
		return out
	}
	if n == 0 || m == 0 {
		return wholesale()
	}
	limit := n + m
	if limit > maxEditDistance {
		limit = maxEditDistance
	}
	v := make([]int, 2*limit+3)
	o := limit + 1
	var trace [][]int
	final := -1
	for d := 0; d <= limit && final < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[o+k-1] < v[o+k+1]) {
				x = v[o+k+1]
			} else {
				x = v[o+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[o+k] = x
			if x >= n && y >= m {
				final = d
				break
			}
		}
		// Only diagonals -d..d matter for backtracking from round d.
		trace = append(trace, append([]int(nil), v[o-d:o+d+1]...))
	}
	if final < 0 {
		return wholesale()
	}
	var rev []edit
	x, y := n, m
	for d := final; d > 0; d-- {
		prev := trace[d-1]
		pv := func(k int) int { return prev[k+d-1] } // diagonal k after round d-1
		k := x - y
		var pk int
		if k == -d || (k != d && pv(k-1) < pv(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := pv(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, edit{' ', off + x, off + y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, edit{'+', off + x, off + y})
		} else {
			x--
			rev = append(rev, edit{'-', off + x, off + y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, edit{' ', off + x, off + y})
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// unifiedDiff is a unified diff (3 lines of context) computed on the real
// lines and printed with the redacted ones.
func unifiedDiff(a, b, aShow, bShow []string, aName, bName string) string {
	const ctx = 3
	edits := diffLines(a, b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(edits) {
			if edits[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(edits) && edits[run].op == ' ' {
				run++
			}
			if run == len(edits) || run-end > 2*ctx {
				end = min(end+ctx, len(edits))
				break
			}
			end = run
		}
		hunk := edits[start:end]
		aStart, bStart, aLen, bLen := hunk[0].a, hunk[0].b, 0, 0
		for _, e := range hunk {
			if e.op != '+' {
				aLen++
			}
			if e.op != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, e := range hunk {
			switch e.op {
			case ' ':
				sb.WriteString(" " + aShow[e.a] + "\n")
			case '-':
				sb.WriteString("-" + aShow[e.a] + "\n")
			case '+':
				sb.WriteString("+" + bShow[e.b] + "\n")
			}
		}
		i = end
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
