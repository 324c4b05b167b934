package chunking

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestWarningKindKnown(t *testing.T) {
	for _, k := range WarningKinds() {
		if got := k.Known(); got != k {
			t.Errorf("%q.Known() = %q, want itself", k, got)
		}
	}
	for _, k := range []WarningKind{"", "Oversize", "bogus"} {
		if got := k.Known(); got != WarnOther {
			t.Errorf("%q.Known() = %q, want %q", k, got, WarnOther)
		}
	}
}

func TestWalkWarningKind(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "nowhere.md"), filepath.Join(dir, "broken.md")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	_, warns, err := WalkFolder(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].Kind != WarnUnreadable {
		t.Errorf("WalkFolder(broken link) warnings = %+v, want one of kind %q", warns, WarnUnreadable)
	}
}
