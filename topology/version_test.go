package topology

import (
	"errors"
	"strings"
	"testing"
)

func TestVersionAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"2.14.0", true},
		{"2.15.2", true},
		{"v2.14.1-beta.2", true},
		{"3.0.0", true},
		{"2.14", true},
		{"2.13.9", false},
		{"2.12.1", false},
		{"2.9.25", false},
		{"1.99.99", false},
		{"", false},
		{"unknown", false},
	} {
		if got := versionAtLeast(tc.v, MinServerVersion); got != tc.want {
			t.Errorf("versionAtLeast(%q, %q) = %v, want %v", tc.v, MinServerVersion, got, tc.want)
		}
	}
}

func TestServerVersionErrorNamesVersions(t *testing.T) {
	err := errorForVersion("2.11.4")
	if !errors.Is(err, ErrServerVersion) {
		t.Fatalf("errorForVersion = %v, want ErrServerVersion", err)
	}
	for _, want := range []string{"2.14.0", "2.11.4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if errorForVersion("2.15.2") != nil || errorForVersion("") != nil {
		t.Error("errorForVersion refuses a recent or unknown (not connected) server")
	}
}
