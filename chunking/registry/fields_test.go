package registry

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/email"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/twostep"
)

// entryFields checks the specs of an entry of Default with checkFields.
func entryFields(t *testing.T, e Entry) error {
	t.Helper()
	switch s := e.specs.(type) {
	case []Spec[markdown.Config]:
		return checkFields(s)
	case []Spec[email.Config]:
		return checkFields(s)
	case []Spec[twostep.Config]:
		return checkFields(s)
	case []Spec[code.Config]:
		return checkFields(s)
	}
	return fmt.Errorf("specs of type %T: add a case to entryFields", e.specs)
}

// checkFields reports the exported fields of C that no spec binds, and
// specs that bind no field of C or share one.
func checkFields[C any](specs []Spec[C]) error {
	var c C
	base := reflect.ValueOf(&c).Elem()
	if base.Kind() != reflect.Struct {
		return fmt.Errorf("configuration %T is not a struct", c)
	}
	byAddr := map[uintptr]string{}
	for _, s := range specs {
		addr := reflect.ValueOf(s.field(&c)).Pointer()
		if other, ok := byAddr[addr]; ok {
			return fmt.Errorf("options %s and %s bind the same field of %T", other, s.opt.Name, c)
		}
		byAddr[addr] = s.opt.Name
	}
	for i := range base.NumField() {
		f := base.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		addr := base.Field(i).Addr().Pointer()
		if _, ok := byAddr[addr]; !ok {
			return fmt.Errorf("field %s of %T has no option", f.Name, c)
		}
		delete(byAddr, addr)
	}
	for _, name := range byAddr {
		return fmt.Errorf("option %s binds no exported field of %T", name, c)
	}
	return nil
}
