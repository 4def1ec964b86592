package legacy

import (
	"github.com/nodeboot/nodeboot/provisioning"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The slow paths are yaml.v3 itself on the layout CABPK's template writes;
// these tests pin what it reads for the values CABPK's users write, and
// prove that every fast path reads what the slow path reads.

var yamlValues = []string{"plain", "~", "null", "Null", "NULL", "true", "0644", "a #b", "#hash", "#!/bin/sh", "'q'", "\"d\"",
	"a: b", "&x y", "&anchor", "!!str z", "*alias", "- x", "@x", "[a]", "{a: b}", "ssh-rsa AAAA key # note", "é ✓", "x\ty",
	"\ttab first", " lead", "trail ", " ", "-E", "a:b", "a:", "trailing nl\n", "line1\nline2", "\nleading nl", "cr\rhere",
	"crlf\r\nline", "nel\u0085here", "ls\u2028here", "bom\ufeffhere", "bell\a", "nul\x00here", "del\x7f", "\"a\nb\"",
	"x\n# comment", "x\n---\ny", "日本語", "zero\u200bwidth", "a\xffb", "command=\"echo hi\" ssh-rsa AAAA"}

func TestSlotReadings(t *testing.T) {
	type reading struct {
		v        string
		null, ok bool
	}
	for _, c := range []struct {
		slot *yamlSlot
		v    string
		want reading
	}{
		{slotUserField, "trailing nl\n", reading{"trailing nl", false, true}},
		{slotUserField, "a #b", reading{"a", false, true}},
		{slotUserField, "'q'", reading{"q", false, true}},
		{slotUserField, "\"a\nb\"", reading{"a b", false, true}},
		{slotUserField, "x\n# comment", reading{"x", false, true}},
		{slotUserField, "bom\ufeffhere", reading{"bom\ufeffhere", false, true}},
		{slotUserField, "~", reading{"", true, true}},
		{slotUserField, "line1\nline2", reading{"", false, false}},
		{slotUserField, "x\n---\ny", reading{"", false, false}},
		{slotUserField, "[a]", reading{"", false, false}},
		{slotUserField, "cr\rhere", reading{"", false, false}},
		{slotUserItem, "#hash", reading{"", true, true}},
		{slotUserItem, "&anchor", reading{"", true, true}},
		{slotUserItem, " ", reading{"", true, true}},
		{slotUserItem, "", reading{"", true, true}},
		{slotUserItem, "\ttab first", reading{"", false, false}},
		{slotFSOption, "NULL", reading{"", true, true}},
		{slotFilePath, " /lead", reading{"/lead", false, true}},
		{slotFileOwner, "", reading{"", true, true}},
	} {
		v, null, ok := c.slot.read(c.v)
		require.Equal(t, c.want, reading{v, null, ok}, "%q after %q", c.v, c.slot.before)
	}
}

// TestSlotFastPath: what plainSafe passes, yaml.v3 reads back unchanged in
// every slot.
func TestSlotFastPath(t *testing.T) {
	for _, slot := range []*yamlSlot{slotUserName, slotUserField, slotUserItem, slotFilePath, slotFileOwner, slotUnitName,
		slotDisk, slotFSName, slotFSMount, slotFSOption} {
		for _, v := range yamlValues {
			if !plainSafe(v) {
				continue
			}
			got, null, ok := slot.parse(v)
			require.Equal(t, []any{v, false, true}, []any{got, null, ok}, "%q after %q", v, slot.before)
		}
	}
}

var blockContents = []string{"", "a", "a\n", "a\n\n\n", "  x\n  y\n", "  x\ny\n", "x\n  y\n", "\tx\n", "x\n\ty\n",
	"\n\nx\n", "  \n x\n", "   \n  x\n", "x\r\ny\r\n", "x\n   \n", "é\n", "a\x01b", "# c\nk: v\n", "x\n  \n", "\n", "   ",
	"cr\rhere", "ls\u2028ps\u2029\n", "bom\ufeff\n", "nel\u0085line\n", "---\ndoc: 1\n...\n", "&a\n*a\n", "no final newline",
	"\t", "unicode é ✓ 😀\n", "tab\tinside\n\tleading tab\n"}

func TestFileContentReadings(t *testing.T) {
	for _, c := range []struct {
		content    string
		want       string
		reindented bool
		broken     bool
	}{
		{"a", "a\n", false, false},
		{"a\n\n\n", "a\n", false, false},
		{"\n\nx\n", "\n\nx\n", false, false},
		{"x\n   \n", "x\n   \n", false, false},
		{"  x\n  y\n", "x\ny\n", true, false},
		{"  x\ny\n", "", false, true},
		{"\tx\n", "", false, true},
		{"x\n\ty\n", "x\n\ty\n", false, false},
		{"x\r\ny\r\n", "x\ny\n", false, false},
		{"cr\rhere", "", false, true},
		{"ls\u2028ps\u2029\n", "", false, true},
		{"bom\ufeff\n", "bom\ufeff\n", false, false},
		{"a\x01b", "", false, true},
		{"", "", false, false},
		{"\n", "", false, false},
	} {
		blk := fileBlock()
		blk.value(provisioning.NewPath("content"), c.content, true)
		r := blk.read()
		require.Equal(t, c.broken, !r.ok(), "%q", c.content)
		if !c.broken {
			require.Equal(t, c.want, r.content, "%q", c.content)
			require.Equal(t, c.reindented, r.reindented, "%q", c.content)
		}
	}
}

// TestBlockFastPath: what the fast path reads, yaml.v3 reads too, for file
// contents, the unindented values of generated files and base64 contents.
func TestBlockFastPath(t *testing.T) {
	for _, c := range append(append([]string{}, blockContents...), yamlValues...) {
		for _, binary := range []bool{false, true} {
			blk := fileBlock()
			if binary {
				blk.before, blk.binary = binaryBlockHead, true
			}
			blk.value(provisioning.NewPath("content"), c, true)
			sudo := fileBlock()
			sudo.value(provisioning.NewPath("name"), "u", false)
			sudo.text(" ")
			sudo.value(provisioning.NewPath("sudo"), c, false)
			for _, k := range []*clcBlock{&blk, &sudo} {
				if !k.simple() {
					continue
				}
				fast, slow := k.read(), k.parse()
				require.Equal(t, slow, fast, "%q", c)
			}
		}
	}
}

// TestBlockNamesTheCulprit: a value that breaks a generated file is named,
// and only that one.
func TestBlockNamesTheCulprit(t *testing.T) {
	blk := fileBlock()
	blk.value(provisioning.NewPath("name"), "u", false)
	blk.text(" ")
	blk.value(provisioning.NewPath("sudo"), "line1\nline2", false)
	r := blk.read()
	require.Equal(t, []string{"sudo"}, pathStrings(r.broken))

	blk = fileBlock()
	blk.value(provisioning.NewPath("name"), "u", false)
	blk.text(" ")
	blk.value(provisioning.NewPath("sudo"), "trailing nl\n", false)
	r = blk.read()
	require.True(t, r.ok())
	require.Equal(t, "u trailing nl\n", r.content)
}

func TestYAMLMode(t *testing.T) {
	for _, c := range []struct {
		perm    string
		mode    int // -1: not a number
		asMeant bool
	}{{"0644", 0o644, true}, {"0600", 0o600, true}, {"644", 644, false}, {"0755", 0o755, true}, {"000", 0, true},
		{"00644", 0o644, true}, {"1e3", 1000, false}, {"3.14", 3, false}, {"0644 # c", 0o644, true}, {" 0644", 0o644, true},
		{"0644\n", 0o644, true}, {"0o644", 0o644, false}, {"0x1a4", 0o644, false}, {"09", 9, false}, {"rw", -1, false},
		{"u+rw", -1, false}, {"'0644'", -1, false}, {"0644\n0", -1, false}} {
		mode, asMeant, ok := yamlMode(c.perm)
		if c.mode < 0 {
			require.False(t, ok, c.perm)
			continue
		}
		require.True(t, ok, c.perm)
		require.Equal(t, c.mode, *mode, c.perm)
		require.Equal(t, c.asMeant, asMeant, c.perm)
		// The fast path reads what yaml.v3 reads.
		slow, slowMeant, slowOK := parseMode(c.perm)
		require.Equal(t, []any{*mode, asMeant, ok}, []any{*slow, slowMeant, slowOK}, c.perm)
	}
	for i := 0; i < 0o7777; i += 0o111 {
		perm := "0" + strconv.FormatInt(int64(i), 8)
		mode, _, _ := yamlMode(perm)
		slow, _, _ := parseMode(perm)
		require.Equal(t, *slow, *mode, perm)
		require.Equal(t, i, *mode, perm)
	}
	_, _, ok := yamlMode(strings.Repeat("9", 30))
	require.False(t, ok)
}

func pathStrings(ps []provisioning.Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
