package legacy

import (
	"reflect"
	"sync"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"
	"github.com/flatcar/ignition/config/validate/report"
)

// Ignition's validate.Validate walks a config by reflection and calls, on
// every node, its Validate method and, for each struct field F, the
// struct's ValidateF method. Most of its time goes to looking those methods
// up by name, allocating field lists and following the parse tree for line
// numbers. cleanByWalk makes the same calls on the same values, with the
// lookups done once per type and no parse tree, and answers only whether
// every call came back without an entry: the fast CLC path needs no more,
// because on any entry it hands the input to the transpiler, whose report
// (positions included) is then CABPK's own. Unknown keys, the one check
// that needs the parse tree, cannot occur there: its parser accepts only
// the keys it knows.

type validator interface{ Validate() report.Report }

var validatorType = reflect.TypeFor[validator]()

// walkPlan is what validate.Validate looks up on a value of one type, with
// the plans of the values below it linked in.
type walkPlan struct {
	// self: Validate is called on the value itself (validate.Validate's
	// test: the type implements it, and a pointer only when its element
	// does not).
	self bool
	// fields of a struct, embedded structs flattened as getFields does.
	fields []walkField
	// elem is the plan of a pointer's or a slice's element.
	elem *walkPlan
	// zeroClean: the type's zero value passes the walk without an entry;
	// every method is a function of its receiver, so any zero value does.
	zeroClean bool
	// opaque: a value whose type is only known at run time (an interface,
	// or an embedded one); such a value is never called clean.
	opaque bool
	// quick, when set, answers for the type's own Validate (walkQuick).
	quick func(reflect.Value) bool
}

type walkField struct {
	index []int
	plan  *walkPlan
	// method is the struct's ValidateF method index, or -1.
	method int
	// quick, when set, answers for the method (walkQuick).
	quick func(reflect.Value) bool
}

// walkQuick are cheaper checks that answer exactly as a validation method
// does (each calls the method itself when it cannot tell): by struct type,
// the field's name, or "" for the type's own Validate. The values they get
// are addressable.
var walkQuick = map[reflect.Type]map[string]func(reflect.Value) bool{
	reflect.TypeFor[ign23types.Unit](): {"Contents": func(v reflect.Value) bool {
		return unitContentsClean(v.Addr().Interface().(*ign23types.Unit))
	}},
	reflect.TypeFor[ign23types.SystemdDropin](): {"": func(v reflect.Value) bool {
		return dropinClean(v.Addr().Interface().(*ign23types.SystemdDropin))
	}},
}

var walkPlans sync.Map // reflect.Type -> *walkPlan of a config type

// planFor returns the plan of t and everything below it.
func planFor(t reflect.Type) *walkPlan {
	if p, ok := walkPlans.Load(t); ok {
		return p.(*walkPlan)
	}
	plans := map[reflect.Type]*walkPlan{}
	p := buildPlan(t, plans)
	// Zero values are walked once every plan exists; a plan still being
	// judged counts as not clean, the safe answer, so recursion ends.
	for t, q := range plans {
		q.zeroClean = !q.opaque && walkClean(reflect.New(t).Elem(), q)
	}
	walkPlans.Store(t, p)
	return p
}

func buildPlan(t reflect.Type, plans map[reflect.Type]*walkPlan) *walkPlan {
	if p, ok := plans[t]; ok {
		return p
	}
	p := &walkPlan{}
	plans[t] = p
	switch t.Kind() {
	case reflect.Pointer:
		p.self = t.Implements(validatorType) && !t.Elem().Implements(validatorType)
		p.elem = buildPlan(t.Elem(), plans)
	case reflect.Interface:
		p.opaque = true
	case reflect.Slice:
		p.self = t.Implements(validatorType)
		p.elem = buildPlan(t.Elem(), plans)
	case reflect.Struct:
		p.self = t.Implements(validatorType)
		p.quick = walkQuick[t][""]
		p.fields, p.opaque = structFields(t, nil)
		for i := range p.fields {
			f := &p.fields[i]
			sf := t.FieldByIndex(f.index)
			f.plan = buildPlan(sf.Type, plans)
			f.method = -1
			if m, ok := t.MethodByName("Validate" + sf.Name); ok {
				f.method = m.Index
				f.quick = walkQuick[t][sf.Name]
			}
		}
	default:
		p.self = t.Implements(validatorType)
	}
	return p
}

// structFields is getFields by type: embedded structs are flattened, an
// embedded interface makes the struct opaque.
func structFields(t reflect.Type, prefix []int) (fields []walkField, opaque bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if f.Anonymous {
			if f.Type.Kind() != reflect.Struct {
				return nil, true
			}
			sub, op := structFields(f.Type, index)
			if op {
				return nil, true
			}
			fields = append(fields, sub...)
			continue
		}
		fields = append(fields, walkField{index: index})
	}
	return fields, false
}

// walkClean reports whether validate.Validate on v, an addressable value
// of p's type, would report nothing.
func walkClean(v reflect.Value, p *walkPlan) bool {
	if p.opaque {
		return false
	}
	if p.zeroClean && v.IsZero() {
		return true
	}
	if p.self && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		switch {
		case p.quick != nil:
			if !p.quick(v) {
				return false
			}
		case v.Kind() == reflect.Pointer:
			if r := v.Interface().(validator).Validate(); len(r.Entries) > 0 {
				return false
			}
		default:
			// Through the address: the same value method, without a copy
			// of the value on the heap.
			if r := v.Addr().Interface().(validator).Validate(); len(r.Entries) > 0 {
				return false
			}
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		return v.IsNil() || walkClean(v.Elem(), p.elem)
	case reflect.Struct:
		for i := range p.fields {
			f := &p.fields[i]
			switch {
			case f.quick != nil:
				if !f.quick(v) {
					return false
				}
			case f.method >= 0:
				if r := v.Method(f.method).Interface().(func() report.Report)(); len(r.Entries) > 0 {
					return false
				}
			}
			if !walkClean(fieldAt(v, f.index), f.plan) {
				return false
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if !walkClean(v.Index(i), p.elem) {
				return false
			}
		}
	}
	return true
}

func fieldAt(v reflect.Value, index []int) reflect.Value {
	if len(index) == 1 {
		return v.Field(index[0])
	}
	return v.FieldByIndex(index)
}

// cleanByWalk is walkClean for a config, passed by pointer.
func cleanByWalk[T any](cfg *T) bool {
	return walkClean(reflect.ValueOf(cfg).Elem(), planFor(reflect.TypeFor[T]()))
}
