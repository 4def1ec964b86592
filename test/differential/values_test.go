package differential

// Value pools. CABPK writes most strings into its YAML (cloud-config) or CLC
// (legacy Ignition) templates unquoted, so every character YAML treats
// specially is drawn into every string field it writes: indicators at the
// start, ": " and " #" inside, quotes, jinja and Go-template delimiters,
// leading and trailing blanks, line breaks of every kind (LF, CR, CRLF, NEL,
// LS/PS), control characters and NUL (JSON strings carry them, so the API
// server stores them), YAML 1.1 booleans, nulls and numbers, and unicode.

// special are scalars YAML reads as something else, or breaks on.
var special = []string{
	// indicators and separators
	"with: colon", "a:b", "key: value # comment", "a #b", "#hash", "#!/bin/sh", "- dash", "-", "--", "---", "...",
	"? question", "?", "&anchor", "*alias", "!tag", "!!str x", "!!binary", "| pipe", "|", "> gt", ">-", "%percent",
	"%YAML 1.2", "@at", "`backtick`", "'single'", "it's", "\"double\"", "say \"hi\"", "[a, b]", "{a: b}", "a, b",
	",comma", "=", "<<", "\\", "back\\slash", "\\n",
	// templates: jinja (cloud-init) and Go (CABPK's files with contentFormat Template are Go templates)
	"{{ .x }}", "{{ ds.meta_data.local_hostname }}", "{% raw %}x{% endraw %}", "{% if a %}b{% endif %}",
	"{# c #}", "{#", "{{", "}}", "{%", "%}",
	// blanks and breaks
	" leading space", "trailing space ", " ", "\ttab first", "a\tb", "trailing tab\t", "line1\nline2", "trailing nl\n",
	"\nleading nl", "cr\rhere", "crlf\r\nline", "nel\u0085here", "ls\u2028here", "ps\u2029here", "bell\x07",
	"esc\x1b[0m", "nul\x00here", "del\x7f", "bom\ufeffhere",
	// YAML 1.1 / 1.2 typed plain scalars
	"yes", "no", "Yes", "NO", "on", "off", "On", "y", "n", "Y", "true", "False", "TRUE", "~", "null", "Null", "NULL",
	"0644", "0o644", "0x1F", "1e3", "1_000", "12:30:00", ".inf", "-.Inf", ".NaN", "2001-12-14", "+1", "-1", "0",
	"3.14", "=", "<<",
	// unicode
	"é", "ünïcödé", "✓ check", "😀 emoji", "שלום עולם", "مرحبا", "\u202eRTL override", "日本語", "zero\u200bwidth",
	// plain
	"plain", "Admin User", "a-b_c.d",
}

// paths are file, home, mount and discovery paths CABPK accepts: absolute,
// Windows (forward and back slashes, drive letters, spaces), relative, and
// paths with the special characters above.
var paths = []string{
	"/etc/gen/a.conf", "/etc/gen/c d.sh", "/etc/gen/ü.txt", "c:/k/azure.json", `C:\k\node.json`, "C:/Program Files/x.ps1",
	`C:\Program Files\kubernetes\kubelet.ps1`, "D:", `\\server\share\x`, "relative/file.txt", "./dot", "../up/x",
	"file-only", "~/home", "/etc/gen/with: colon", "/etc/gen/hash #x", "- /dash", "/etc/gen/'q'", "/etc/gen/\"dq\"",
	"/etc/gen/{{ .x }}", "/etc/gen/{% x %}", "/etc/gen/trail ", " /lead", "/etc/gen/tab\tx", "/etc/gen/nl\nx",
	"/etc/gen/yes", "/etc/gen/😀", "/etc/gen/שלום", "/etc/gen/*star", "/etc/gen/&amp", "/etc/gen/!bang", "/etc/gen/%p",
	"/etc/gen/@at", "/etc/gen/`tick`", "/etc/gen/[x]", "/etc/gen/{x}", "/etc/gen/a,b", "/", "/etc//double", "/etc/gen/.",
	"~", "yes", "0644", "?", "|", ">",
}

// permissions are what files[].permissions (MaxLength 16) may hold.
var permissions = []string{"0644", "0600", "0755", "0400", "0640", "644", "755", "0o644", "0x1a4", "u+rw", "a=r",
	"rw-r--r--", "420", "0", "00644", "1777", "04755", "yes", "~", "0644 # c", " 0644", "0644\n", "'0644'", "9999", "é"}

// owners are files[].owner values.
var owners = []string{"root:root", "root", "nobody:nogroup", "1000:1000", "core:core", ":root", "root:", ":", "root:root:x",
	"root : root", " root", "user name", "root #x", "ünï:cödé", "a: b", "DOMAIN\\user", "- root", "yes:no", "~", "0:0"}

// contents are multi-line file contents and command bodies.
var contents = []string{"", "a", "plain line\n", "two\nlines\n", "trailing\n\n\n", "  indented\n  block\n",
	"first\n  second indented\n", "tab\tinside\n\tleading tab\n", "# comment\nkey: value\n", "unicode é ✓ 😀\n",
	"crlf\r\nline\r\n", "cr only\rline", "spaces at end   \n", "  \n  after blank\n", "x: [1, 2]\n", "   ",
	"\n", "\n\nleading blank lines\n", "- list\n- item\n", "---\ndoc: 1\n...\n", "|\n  block\n", ">\n  folded\n",
	"{{ .controlPlane.version }}\n", "{{ not go }}\n", "{% if x %}y{% endif %}\n", "{# comment #}\n", "{{ ds.meta_data.local_hostname }}\n",
	"nel\u0085line\n", "ls\u2028ps\u2029\n", "nul\x00byte\n", "ctrl\x01\x02\x1f\n", "bom\ufeff\n", "#!/bin/bash\necho hi\n",
	"no final newline", "\t", "yes", "~", "0644", "'quoted'\n", "\"dq\"\n", "key=value\n", "%percent\n", "@at\n", "`tick`\n",
	"!tag\n", "&a\n*a\n", "? q\n", "[a]\n", "{a: b}\n", "\\ back\\slash\n"}

// commands are boot, pre- and post-kubeadm commands (items: MinLength 1).
var commands = []string{"echo hello", `echo "quoted $HOME" > /tmp/x`, "systemctl restart containerd",
	"if [ -f /etc/a ]; then\n  echo multi\nfi\n", "sed -i 's/a/b/' /etc/hosts", "echo 'single' && true",
	"printf '%s\\n' tab\there", "echo ünïcödé", "  leading space", "trailing\n\n", "a # comment", "cat <<EOF\nheredoc\nEOF",
	"echo {{ ds.meta_data.local_hostname }}", "echo '{{ .x }}'", "{% if true %}echo j{% endif %}", "echo {# c #}",
	"- dash", "key: value", "? q", "| pipe", "> gt", "&a", "*a", "!t", "%p", "@a", "`date`", "[a, b]", "{a: b}", "yes", "~",
	"0644", "1e3", "echo crlf\r\n", "echo nel\u0085x", "echo ls\u2028x", "echo nul\x00x", "echo \x07bell", " ", "\t", "\n",
	"'single quoted'", "\"double quoted\"", "echo 😀 שלום", "powershell -Command \"Get-Item C:\\k\"", "echo a: b # c"}

// gptGUIDs are full GPT partition type GUIDs (the CEL rule allows any case).
var gptGUIDs = []string{"0FC63DAF-8483-4772-8E79-3D69D8477DE4", "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", "E6D6D379-F507-44C2-A23C-238F2A3DF928"}

var partitionTypes = []string{"Linux", "LinuxSwap", "LinuxRAID", "LVM", "Fat32", "NTFS", "LinuxExtended"}
