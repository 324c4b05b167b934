package testutil_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// fakeTB records a failure instead of failing the test; Fatalf ends the
// goroutine it runs on, as testing.T's does.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs fn with a fakeTB on a goroutine of its own and returns the
// failure message, "" when fn returned normally.
func failure(fn func(tb testing.TB)) string {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.failed
}

func TestWaitFor(t *testing.T) {
	calls := 0
	msg := failure(func(tb testing.TB) {
		testutil.WaitFor(tb, time.Minute, "the third call", func() bool { calls++; return calls == 3 })
	})
	if msg != "" || calls != 3 {
		t.Errorf("WaitFor(true on the third call) failed %q after %d calls, want success after 3", msg, calls)
	}

	calls = 0
	msg = failure(func(tb testing.TB) {
		testutil.WaitFor(tb, time.Minute, "the second call", func() (bool, string) { calls++; return calls == 2, "" })
	})
	if msg != "" || calls != 2 {
		t.Errorf("WaitFor(state, true on the second call) failed %q after %d calls, want success after 2", msg, calls)
	}
}

func TestWaitForTimesOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait func(tb testing.TB, calls *int)
		want []string
	}{
		{"bool", func(tb testing.TB, calls *int) {
			testutil.WaitFor(tb, 10*time.Millisecond, "nothing", func() bool { *calls++; return false })
		}, []string{"timed out after 10ms waiting for nothing"}},
		{"state", func(tb testing.TB, calls *int) {
			testutil.WaitFor(tb, 10*time.Millisecond, "nothing", func() (bool, string) { *calls++; return false, fmt.Sprintf("call %d", *calls) })
		}, []string{"timed out after 10ms waiting for nothing (last: call "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			msg := failure(func(tb testing.TB) { tc.wait(tb, &calls) })
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("WaitFor(never) failed with %q, want it to say %q", msg, w)
				}
			}
			if calls < 2 {
				t.Errorf("WaitFor(never) called cond %d times, want it polled at least twice", calls)
			}
			if tc.name == "state" && !strings.HasSuffix(msg, fmt.Sprintf("(last: call %d)", calls)) {
				t.Errorf("WaitFor(never) failed with %q, want the last state, call %d", msg, calls)
			}
		})
	}
}

func TestFreePorts(t *testing.T) {
	ports := testutil.FreePorts(t, 8)
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Errorf("FreePorts(8) = %v, want 8 distinct ports", ports)
			break
		}
		seen[p] = true
	}
	if len(ports) != 8 {
		t.Errorf("FreePorts(8) returned %d ports", len(ports))
	}
}

func TestSyncBuffer(t *testing.T) {
	var b testutil.SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("SyncBuffer after 800 concurrent writes of x holds %d bytes, want 800", len(got))
	}
}

func TestBinary(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	const pkg = "./internal/testutil/testdata/hello"
	// A second build would fail: it goes to the same, existing folder.
	paths := [2]string{testutil.Binary(t, pkg), testutil.Binary(t, pkg)}
	if paths[0] != paths[1] || filepath.Base(paths[0]) != "hello" {
		t.Fatalf("Binary(%s) twice = %q, want one executable named hello", pkg, paths)
	}
	out, err := exec.Command(paths[0], "a", "b").Output()
	if err != nil || string(out) != "[a b]\n" {
		t.Errorf("hello a b = %q, %v; want [a b]", out, err)
	}
}

func TestBinaryPrebuilt(t *testing.T) {
	t.Setenv("CHUNKSTREAM_TEST_PRODUCER_BIN", "/prebuilt/producer")
	if got := testutil.Binary(t, "./cmd/producer"); got != "/prebuilt/producer" {
		t.Errorf("Binary(./cmd/producer) with CHUNKSTREAM_TEST_PRODUCER_BIN set = %q, want that file", got)
	}
}
