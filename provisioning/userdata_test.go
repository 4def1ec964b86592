package provisioning

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateUserDataAndTemplates: each mistake is one error at its
// field, and a good Plan has none.
func TestValidateUserDataAndTemplates(t *testing.T) {
	base := func() *Plan {
		return &Plan{Commands: []Command{{Phase: PhaseBootstrap, Script: "true"}}}
	}
	cases := []struct {
		name string
		edit func(*Plan)
		at   string // "" means no problem
	}{
		{"good", func(p *Plan) {
			p.UserData = []UserData{{Type: UserDataShellScript, Content: "#!/bin/sh\ntrue\n"}}
			p.Files = []File{{Path: "/etc/x", Template: Text{Literal("n="), Value(NodeName)}}}
			p.Commands[0] = Command{Phase: PhaseBootstrap, Template: Text{Literal("echo "), Value(NodeInstanceID)}}
		}, ""},
		{"unknown type", func(p *Plan) { p.UserData = []UserData{{Type: "mime", Content: "x"}} }, "userData[0].type"},
		{"too large", func(p *Plan) {
			p.UserData = []UserData{{Type: UserDataCloudConfig, Content: strings.Repeat("a", MaxUserDataBytes+1)}}
		}, "userData[0].content"},
		{"empty", func(p *Plan) { p.UserData = []UserData{{Type: UserDataCloudConfig, Content: " \n"}} }, "userData[0].content"},
		{"script without #!", func(p *Plan) { p.UserData = []UserData{{Type: UserDataShellScript, Content: "echo hi\n"}} }, "userData[0].content"},
		{"origin", func(p *Plan) {
			p.UserData = []UserData{{Type: UserDataShellScript, Content: "echo\n", Origin: NewPath("spec", "additionalUserData").WithFields()}}
		}, "spec.additionalUserData.content"},
		{"template and content", func(p *Plan) {
			p.Files = []File{{Path: "/etc/x", Content: "x", Template: Text{Value(NodeName)}}}
		}, "files[0].template"},
		{"template and encoding", func(p *Plan) {
			p.Files = []File{{Path: "/etc/x", Encoding: EncodingBase64, Template: Text{Value(NodeName)}}}
		}, "files[0].encoding"},
		{"template and script", func(p *Plan) {
			p.Commands[0].Template = Text{Value(NodeName)}
		}, "commands[0].template"},
		{"part with both", func(p *Plan) {
			p.Files = []File{{Path: "/etc/x", Template: Text{{Literal: "a", Value: NodeName}}}}
		}, "files[0].template[0]"},
		{"unknown value", func(p *Plan) {
			p.Files = []File{{Path: "/etc/x", Template: Text{Value("zone")}}}
		}, "files[0].template[0].value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base()
			c.edit(p)
			ps := p.Validate().Errors()
			if c.at == "" {
				if len(ps) > 0 {
					t.Fatalf("want no problem, got %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Path.String() != c.at || !errors.Is(ps[0], ErrInvalid) {
				t.Fatalf("want one ErrInvalid problem at %s, got %v", c.at, ps)
			}
		})
	}
}

func TestTextExpand(t *testing.T) {
	txt := Text{Literal("a {{ b }} "), Value(NodeName), Literal(" "), Value(NodeLocalIPv4), Value(NodeName)}
	if got := txt.Expand(ShellValue); got != `a {{ b }} "${NODEBOOT_NODE_NAME}" "${NODEBOOT_LOCAL_IPV4}""${NODEBOOT_NODE_NAME}"` {
		t.Errorf("Expand: %q", got)
	}
	if got := txt.Values(); len(got) != 2 || got[0] != NodeName || got[1] != NodeLocalIPv4 {
		t.Errorf("Values: %v", got)
	}
	p := &Plan{Commands: []Command{{Template: Text{Value(NodeInstanceID)}}}}
	q := p.WithCommandTemplates()
	if q.Commands[0].Script != `"${NODEBOOT_INSTANCE_ID}"` || len(q.Commands[0].Template) != 0 || len(p.Commands[0].Template) != 1 {
		t.Errorf("WithCommandTemplates: %+v, original %+v", q.Commands[0], p.Commands[0])
	}
}
