package clustertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// process is a running worker binary.
type process struct {
	cmd    *exec.Cmd
	out    *testutil.SyncBuffer
	done   chan struct{}
	exit   error
	bin    string
	health string // metrics address
}

// startProcess runs the worker with exactly env (plus PATH and HOME).
func startProcess(t *testing.T, env map[string]string) *process {
	t.Helper()
	return startCommand(t, testutil.Binary(t, "./cmd/worker"), nil, env)
}

// startCommand runs bin with args and exactly env (plus PATH and HOME).
func startCommand(t *testing.T, bin string, args []string, env map[string]string) *process {
	t.Helper()
	p := &process{bin: bin, out: &testutil.SyncBuffer{}, done: make(chan struct{}), health: env["CHUNKSTREAM_METRICS_ADDR"]}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exit = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitExit waits for the process to end and returns its exit code.
func (p *process) waitExit(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("worker still running after %v; output:\n%s", d, p.out.String())
	}
	if p.exit == nil {
		return 0
	}
	if ee, ok := p.exit.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("worker: %v", p.exit)
	return -1
}

// waitReady waits until `worker -healthcheck` passes against the process
// or the process ends, whichever comes first.
func (p *process) waitReady(t *testing.T, what string) {
	t.Helper()
	testutil.WaitFor(t, 60*time.Second, what, func() (bool, string) {
		select {
		case <-p.done:
			return true, ""
		default:
		}
		return p.healthy()
	})
}

// waitRunning is waitReady for a process that must still be running.
func (p *process) waitRunning(t *testing.T, what string) {
	t.Helper()
	p.waitReady(t, what)
	select {
	case <-p.done:
		t.Fatalf("%s: the process exited: %v\n%s", what, p.exit, p.out.String())
	default:
	}
}

// authOutcome settles a worker started with credentials: when ok, it
// waits for readiness and sends SIGTERM, expecting exit 0; otherwise it
// expects exit 1 with an authorization error. It returns the output.
func (p *process) authOutcome(t *testing.T, ok bool) string {
	t.Helper()
	if ok {
		p.waitReady(t, "worker ready")
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	code := p.waitExit(t, 30*time.Second)
	out := p.out.String()
	switch {
	case ok && code != 0:
		t.Errorf("exit status = %d, want 0 after SIGTERM\n%s", code, out)
	case !ok && (code != 1 || !strings.Contains(strings.ToLower(out), "authorization")):
		t.Errorf("exit status = %d, want 1 with an authorization error\n%s", code, out)
	}
	return out
}

// healthy runs `worker -healthcheck` against the process, as the image's
// HEALTHCHECK does.
func (p *process) healthy() (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, "-healthcheck")
	cmd.Env = []string{"CHUNKSTREAM_METRICS_ADDR=" + p.health}
	out, err := cmd.CombinedOutput()
	return err == nil, strings.TrimSpace(string(out))
}

// secureEnv is the environment of a worker reaching srvURL.
func secureEnv(t *testing.T, url string) map[string]string {
	t.Helper()
	return map[string]string{
		"NATS_URL":                  url,
		"CHUNKSTREAM_METRICS_ADDR":  fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)),
		"CHUNKSTREAM_LOG_LEVEL":     "debug",
		"CHUNKSTREAM_DRAIN_TIMEOUT": "5s",
		"CHUNKSTREAM_CONCURRENCY":   "1",
	}
}

const (
	testUser     = "chunkstream"
	testPassword = "s3cret-pässword-do-not-log"
)

// TestWorkerConnectsWithTLSAndPassword: a server requiring TLS and a
// user; the worker with the CA and the right password becomes ready,
// keeps the password out of its logs and metrics, and stops cleanly on
// SIGTERM.
func TestWorkerConnectsWithTLSAndPassword(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	c := makeCerts(t, t.TempDir(), "server")
	srv := secureServer(t, c, testUser, testPassword, false)
	env := secureEnv(t, tlsURL(srv))
	env["CHUNKSTREAM_NATS_USER"] = testUser
	env["CHUNKSTREAM_NATS_PASSWORD"] = testPassword
	env["CHUNKSTREAM_NATS_TLS_CA"] = c.CAFile
	p := startProcess(t, env)
	p.waitRunning(t, "worker -healthcheck to pass")
	resp, err := http.Get("http://" + env["CHUNKSTREAM_METRICS_ADDR"] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.waitExit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit status after SIGTERM = %d, want 0\n%s", code, p.out.String())
	}
	for what, s := range map[string]string{"logs": p.out.String(), "/metrics": string(metrics)} {
		if strings.Contains(s, testPassword) {
			t.Errorf("the password appears in the worker's %s", what)
		}
	}
}

// TestWorkerRefusedWithClearErrors: wrong password, no CA, and a server
// that wants a client certificate the worker lacks each end the worker
// with status 1 and an error naming the cause, without the password.
func TestWorkerRefusedWithClearErrors(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	dir := t.TempDir()
	c := makeCerts(t, dir, "server")
	srv := secureServer(t, c, testUser, testPassword, false)
	url := tlsURL(srv)
	mtls := secureServer(t, c, testUser, testPassword, true)
	mtlsURL := tlsURL(mtls)
	other := makeCerts(t, dir, "other")

	for _, tc := range []struct {
		name     string
		url      string
		env      map[string]string
		want     []string // any of these, case-insensitive
		password string
	}{
		{"wrong password", url, map[string]string{
			"CHUNKSTREAM_NATS_USER": testUser, "CHUNKSTREAM_NATS_PASSWORD": "wrong-password-xyz", "CHUNKSTREAM_NATS_TLS_CA": c.CAFile,
		}, []string{"authorization"}, "wrong-password-xyz"},
		{"no password", url, map[string]string{
			"CHUNKSTREAM_NATS_TLS_CA": c.CAFile,
		}, []string{"authorization"}, ""},
		{"unknown CA", url, map[string]string{
			"CHUNKSTREAM_NATS_USER": testUser, "CHUNKSTREAM_NATS_PASSWORD": testPassword, "CHUNKSTREAM_NATS_TLS_CA": other.CAFile,
		}, []string{"certificate", "x509"}, testPassword},
		{"no client certificate", mtlsURL, map[string]string{
			"CHUNKSTREAM_NATS_USER": testUser, "CHUNKSTREAM_NATS_PASSWORD": testPassword, "CHUNKSTREAM_NATS_TLS_CA": c.CAFile,
		}, []string{"certificate", "tls", "eof", "reset"}, testPassword},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := secureEnv(t, tc.url)
			for k, v := range tc.env {
				env[k] = v
			}
			p := startProcess(t, env)
			code := p.waitExit(t, 30*time.Second)
			out := p.out.String()
			t.Logf("exit %d: %s", code, strings.TrimSpace(out))
			if code != 1 {
				t.Errorf("exit status = %d, want 1\n%s", code, out)
			}
			found := false
			for _, w := range tc.want {
				found = found || strings.Contains(strings.ToLower(out), w)
			}
			if !found {
				t.Errorf("output names none of %q:\n%s", tc.want, out)
			}
			if tc.password != "" && strings.Contains(out, tc.password) {
				t.Errorf("the password appears in the output:\n%s", out)
			}
		})
	}

	// With the client certificate the mTLS server accepts the worker.
	env := secureEnv(t, mtlsURL)
	env["CHUNKSTREAM_NATS_USER"] = testUser
	env["CHUNKSTREAM_NATS_PASSWORD"] = testPassword
	env["CHUNKSTREAM_NATS_TLS_CA"] = c.CAFile
	env["CHUNKSTREAM_NATS_TLS_CERT"] = c.CertFile
	env["CHUNKSTREAM_NATS_TLS_KEY"] = c.KeyFile
	p := startProcess(t, env)
	p.waitRunning(t, "worker with a client certificate ready")
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.waitExit(t, 30*time.Second); code != 0 {
		t.Errorf("exit status after SIGTERM = %d, want 0", code)
	}
}

// tlsURL is the server's client URL with the tls:// scheme.
func tlsURL(s *server.Server) string {
	return strings.Replace(s.ClientURL(), "nats://", "tls://", 1)
}

// TestWorkerAuthMethods: over TLS, a token and an NKey seed file (the
// other credentials the worker takes) are accepted when right and refused
// with an authorization error when wrong, and never printed.
func TestWorkerAuthMethods(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	dir := t.TempDir()
	c := makeCerts(t, dir, "server")
	const token = "t0ken-do-not-log"
	tokenSrv := secureServer(t, c, "", "", false, func(o *server.Options) { o.Authorization = token })

	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	seedFile := filepath.Join(dir, "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	otherFile := filepath.Join(dir, "other.nk")
	if err := os.WriteFile(otherFile, otherSeed, 0o600); err != nil {
		t.Fatal(err)
	}
	nkeySrv := secureServer(t, c, "", "", false, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} })

	for _, tc := range []struct {
		name   string
		url    string
		env    map[string]string
		ok     bool
		secret string
	}{
		{"token", tlsURL(tokenSrv), map[string]string{"CHUNKSTREAM_NATS_TOKEN": token}, true, token},
		{"wrong token", tlsURL(tokenSrv), map[string]string{"CHUNKSTREAM_NATS_TOKEN": "wrong-t0ken"}, false, "wrong-t0ken"},
		{"nkey", tlsURL(nkeySrv), map[string]string{"CHUNKSTREAM_NATS_NKEY": seedFile}, true, string(seed)},
		{"unknown nkey", tlsURL(nkeySrv), map[string]string{"CHUNKSTREAM_NATS_NKEY": otherFile}, false, string(otherSeed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := secureEnv(t, tc.url)
			env["CHUNKSTREAM_NATS_TLS_CA"] = c.CAFile
			for k, v := range tc.env {
				env[k] = v
			}
			out := startProcess(t, env).authOutcome(t, tc.ok)
			if strings.Contains(out, tc.secret) {
				t.Errorf("the secret appears in the output:\n%s", out)
			}
		})
	}
}

// TestWorkerCredsFile: a server in operator (JWT) mode, an account with
// JetStream, and a user whose creds file (JWT + NKey seed) the worker reads
// from CHUNKSTREAM_NATS_CREDS; a user of an unknown account is refused.
func TestWorkerCredsFile(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	dir := t.TempDir()
	c := makeCerts(t, dir, "server")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	okp, err := nkeys.CreateOperator()
	must(err)
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	ojwt, err := oc.Encode(okp)
	must(err)
	oclaims, err := jwt.DecodeOperatorClaims(ojwt)
	must(err)

	account := func(js bool) (nkeys.KeyPair, string, string) {
		akp, err := nkeys.CreateAccount()
		must(err)
		apub, _ := akp.PublicKey()
		ac := jwt.NewAccountClaims(apub)
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		ajwt, err := ac.Encode(okp)
		must(err)
		return akp, apub, ajwt
	}
	_, syspub, sysjwt := account(false)
	akp, apub, ajwt := account(true)
	resolver := &server.MemAccResolver{}
	must(resolver.Store(syspub, sysjwt))
	must(resolver.Store(apub, ajwt))

	creds := func(name string, signer nkeys.KeyPair) (string, []byte) {
		ukp, err := nkeys.CreateUser()
		must(err)
		upub, _ := ukp.PublicKey()
		useed, _ := ukp.Seed()
		ujwt, err := jwt.NewUserClaims(upub).Encode(signer)
		must(err)
		data, err := jwt.FormatUserConfig(ujwt, useed)
		must(err)
		path := filepath.Join(dir, name+".creds")
		must(os.WriteFile(path, data, 0o600))
		return path, useed
	}
	good, goodSeed := creds("good", akp)
	strangerKP, _ := nkeys.CreateAccount() // never stored in the resolver
	bad, badSeed := creds("bad", strangerKP)

	srv := secureServer(t, c, "", "", false, func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{oclaims}
		o.AccountResolver = resolver
		o.SystemAccount = syspub
	})
	for _, tc := range []struct {
		name  string
		creds string
		seed  []byte
		ok    bool
	}{{"creds", good, goodSeed, true}, {"unknown account", bad, badSeed, false}} {
		t.Run(tc.name, func(t *testing.T) {
			env := secureEnv(t, tlsURL(srv))
			env["CHUNKSTREAM_NATS_TLS_CA"] = c.CAFile
			env["CHUNKSTREAM_NATS_CREDS"] = tc.creds
			out := startProcess(t, env).authOutcome(t, tc.ok)
			if strings.Contains(out, string(tc.seed)) {
				t.Errorf("the NKey seed appears in the output:\n%s", out)
			}
		})
	}
}
