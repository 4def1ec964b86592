package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
	"unicode/utf8"
)

// Limits of contentFormat: Template files. CABPK bounds only the rendered
// bytes of one file; text/template has no way to stop a loop or a recursion
// that writes nothing, so the other limits are nodeboot's. Every one is far
// above what a template over CABPK's data (one version string) can need.
const (
	// MaxTemplateBytes bounds one rendered file, as in CABPK (1 MiB).
	MaxTemplateBytes = 1 << 20
	// MaxTemplateTime bounds the execution of all templates of one build.
	MaxTemplateTime = 2 * time.Second
	// MaxTemplateSteps bounds range iterations plus template calls of all
	// templates of one build.
	MaxTemplateSteps = 1 << 20
	// MaxTemplateDepth bounds nested {{template}} calls (text/template's own
	// bound, 100000, costs hundreds of MB of stack).
	MaxTemplateDepth = 1000
	// MaxTemplateFuncBytes bounds the bytes all builtin function calls of one
	// build produce, printed or not: {{len (printf "%01000000d" 0)}} in a
	// loop would otherwise allocate without writing.
	MaxTemplateFuncBytes = 64 << 20
	// maxFuncResult bounds what one printf may be asked to produce, before
	// fmt allocates it.
	maxFuncResult = 16 << 20
)

// ErrTemplateLimit is wrapped by every template error caused by a limit.
var ErrTemplateLimit = errors.New("template exceeds a limit")

// templateError is a template failure described without the template's
// text: text/template quotes the source (function names, operands, the
// action that failed), and the source may come from a Secret.
type templateError struct {
	line  int
	what  string
	limit bool
}

func (e *templateError) Error() string {
	if e.line > 0 {
		return "template line " + strconv.Itoa(e.line) + ": " + e.what
	}
	return "template: " + e.what
}

func (e *templateError) Is(target error) bool { return e.limit && target == ErrTemplateLimit }

// templateBudget is shared by the templates of one build, so a config with
// many files cannot multiply the time it holds a worker.
type templateBudget struct {
	ctx       context.Context
	deadline  time.Time
	steps     int
	funcBytes int
	checks    int
}

func newTemplateBudget(ctx context.Context) *templateBudget {
	return &templateBudget{ctx: ctx}
}

// exceeded is the one check every step, call and write makes; it returns the
// limit that was hit. The clock starts with the first template.
func (b *templateBudget) exceeded() error {
	if b.deadline.IsZero() {
		b.deadline = time.Now().Add(MaxTemplateTime)
	}
	switch {
	case b.steps > MaxTemplateSteps:
		return limitf("runs more than %d loop iterations and template calls", MaxTemplateSteps)
	case b.funcBytes > MaxTemplateFuncBytes:
		return limitf("its function calls produce more than %d bytes", MaxTemplateFuncBytes)
	}
	// The clock and the context are read every 16th check: each check is
	// at most one bounded step, call or write apart, and reading them is
	// most of the cost of a loop iteration.
	if b.checks++; b.checks%16 != 1 {
		return nil
	}
	if time.Now().After(b.deadline) {
		return limitf("runs longer than %s", MaxTemplateTime)
	}
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("template: stopped: %w", err)
	}
	return nil
}

func limitf(format string, args ...any) error {
	return &templateError{what: fmt.Sprintf(format, args...), limit: true}
}

// execution is one template's run: its budget, its output and its depth.
type execution struct {
	budget    *templateBudget
	out       bytes.Buffer
	remaining int
	depth     int
}

func (x *execution) Write(p []byte) (int, error) {
	if err := x.budget.exceeded(); err != nil {
		return 0, err
	}
	if len(p) > x.remaining {
		return 0, limitf("rendered output exceeds the %d byte limit", MaxTemplateBytes)
	}
	x.remaining -= len(p)
	return x.out.Write(p)
}

// Names of the hooks injected into the parsed tree. They are added after
// parsing, so a template that names them fails to parse, as in CABPK.
const (
	hookStep  = "nodeboot_step"
	hookEnter = "nodeboot_enter"
	hookLeave = "nodeboot_leave"
)

// renderTemplate renders content as CABPK does (text/template, named after
// the file's path, data as CABPK's templateData) with the same bytes for
// every template CABPK renders within the limits above. Errors name the
// template line, never its text.
func renderTemplate(budget *templateBudget, name, content string, data map[string]any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", &templateError{what: "text/template failed unexpectedly"}
		}
	}()
	t, err := template.New(name).Parse(content)
	if err != nil {
		return "", &templateError{line: errorLine(name, err), what: "cannot be parsed (text/template syntax)"}
	}
	x := &execution{budget: budget, remaining: MaxTemplateBytes}
	t.Funcs(x.funcs())
	instrument(t)
	if err := t.Execute(x, data); err != nil {
		var te *templateError
		if errors.As(err, &te) {
			if te.line == 0 {
				te.line = errorLine(name, err)
			}
			return "", te
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", err
		}
		return "", &templateError{line: errorLine(name, err), what: "execution failed"}
	}
	return x.out.String(), nil
}

// errorLine reads the line from text/template's "template: NAME:LINE:..."
// prefix; 0 when there is none.
func errorLine(name string, err error) int {
	msg, ok := strings.CutPrefix(err.Error(), "template: "+name+":")
	if !ok {
		return 0
	}
	end := strings.IndexFunc(msg, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return 0
	}
	n, _ := strconv.Atoi(msg[:end])
	return n
}

// instrument makes every range iteration take a step and every template
// body track its depth, by adding hook actions to the parsed trees. The
// hooks print nothing, so the output is unchanged.
func instrument(t *template.Template) {
	seen := map[*parse.ListNode]bool{}
	for _, tt := range append(t.Templates(), t) {
		if tt.Tree == nil || tt.Root == nil || seen[tt.Root] {
			continue
		}
		root := tt.Root
		seen[root] = true
		walkLists(root, seen)
		root.Nodes = append(append([]parse.Node{hook(hookEnter, root.Pos)}, root.Nodes...), hook(hookLeave, root.Pos))
	}
}

func walkLists(l *parse.ListNode, seen map[*parse.ListNode]bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.RangeNode:
			if !seen[n.List] {
				seen[n.List] = true
				walkLists(n.List, seen)
				n.List.Nodes = append([]parse.Node{hook(hookStep, n.Pos)}, n.List.Nodes...)
			}
			walkLists(n.ElseList, seen)
		case *parse.IfNode:
			walkLists(n.List, seen)
			walkLists(n.ElseList, seen)
		case *parse.WithNode:
			walkLists(n.List, seen)
			walkLists(n.ElseList, seen)
		}
	}
}

func hook(name string, pos parse.Pos) parse.Node {
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{
		NodeType: parse.NodePipe, Pos: pos,
		Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{parse.NewIdentifier(name).SetPos(pos)}}},
	}}
}

// funcs are the hooks and bounded replacements for the builtins whose output
// can outgrow their input (printf's widths, html's and js's escapes): same
// results, but the size is checked before anything is allocated.
func (x *execution) funcs() template.FuncMap {
	return template.FuncMap{
		hookStep: func() (string, error) {
			x.budget.steps++
			return "", x.budget.exceeded()
		},
		hookEnter: func() (string, error) {
			x.budget.steps++
			if x.depth++; x.depth > MaxTemplateDepth {
				return "", limitf("nests template calls deeper than %d", MaxTemplateDepth)
			}
			return "", x.budget.exceeded()
		},
		hookLeave: func() string {
			x.depth--
			return ""
		},
		"printf": func(format string, args ...any) (string, error) {
			if err := x.charge(printfBound(format, args)); err != nil {
				return "", err
			}
			return x.produced(fmt.Sprintf(format, args...))
		},
		"print": func(args ...any) (string, error) {
			if err := x.charge(argsBound(args)); err != nil {
				return "", err
			}
			return x.produced(fmt.Sprint(args...))
		},
		"println": func(args ...any) (string, error) {
			if err := x.charge(argsBound(args) + len(args)); err != nil {
				return "", err
			}
			return x.produced(fmt.Sprintln(args...))
		},
		"html": func(args ...any) (string, error) {
			// &#34; is the longest escape: 5 bytes for 1.
			if err := x.charge(5 * argsBound(args)); err != nil {
				return "", err
			}
			return x.produced(template.HTMLEscaper(args...))
		},
		"js": func(args ...any) (string, error) {
			// \u2028 is the longest escape: 6 bytes for 3, \u003C 6 for 1.
			if err := x.charge(6 * argsBound(args)); err != nil {
				return "", err
			}
			return x.produced(template.JSEscaper(args...))
		},
		"urlquery": func(args ...any) (string, error) {
			if err := x.charge(3 * argsBound(args)); err != nil {
				return "", err
			}
			return x.produced(template.URLQueryEscaper(args...))
		},
	}
}

// charge refuses a call whose bound exceeds what one call may produce.
func (x *execution) charge(bound int) error {
	if bound > maxFuncResult {
		return limitf("a function call could produce more than %d bytes", maxFuncResult)
	}
	return x.budget.exceeded()
}

func (x *execution) produced(s string) (string, error) {
	x.budget.funcBytes += len(s)
	if err := x.budget.exceeded(); err != nil {
		return "", err
	}
	return s, nil
}

// argsBound is an upper bound of the bytes fmt.Sprint prints for args.
// Composite values come only from the template data, which is small.
func argsBound(args []any) int {
	n := 0
	for _, a := range args {
		n += argBound(a) + 1
	}
	return n
}

func argBound(a any) int {
	switch v := a.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64, complex64, complex128:
		return 64
	}
	rv := reflect.ValueOf(a)
	switch rv.Kind() {
	case reflect.String:
		return rv.Len()
	case reflect.Map, reflect.Slice, reflect.Array:
		if rv.Len() > 1024 {
			return maxFuncResult + 1
		}
	}
	return len(fmt.Sprint(a))
}

// printfBound is an upper bound of the bytes fmt.Sprintf(format, args...)
// produces: per verb, its width and precision (fmt caps each at 1e6) plus
// the largest argument escaped at the widest (%q, %x, % x).
func printfBound(format string, args []any) int {
	widest := 0
	for _, a := range args {
		widest = max(widest, argBound(a))
	}
	perArg := 6*widest + 64
	n := len(format)
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		num, verb := 0, 0
		for ; i < len(format); i++ {
			c := format[i]
			if c >= '0' && c <= '9' {
				num = min(num*10+int(c-'0'), 1e6)
				continue
			}
			verb, num = verb+num, 0
			if c == '*' {
				verb += 1e6
				continue
			}
			if strings.IndexByte("+-# .[]", c) >= 0 {
				continue
			}
			if c >= utf8.RuneSelf {
				_, size := utf8.DecodeRuneInString(format[i:])
				i += size - 1
			}
			break
		}
		verb += num
		n += verb + perArg
		if n > maxFuncResult {
			return n
		}
	}
	return n
}
