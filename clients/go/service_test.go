package retryd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// secretValue is what the service's {{secret:ORDERS_TOKEN}} resolves to.
const secretValue = "Bearer s3cret-orders"

// A real `retryd serve` (the built CLI, packages/server/dist), started once for the tests that need it, on an
// in-memory SQLite store, a free port, loopback targets allowed and one secret.
var service struct {
	once sync.Once
	url  string
	cmd  *exec.Cmd
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if service.cmd != nil {
		_ = service.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = service.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = service.cmd.Process.Kill()
		}
	}
	os.Exit(code)
}

// serviceURL starts the service on first use and answers its URL; the test fails when it cannot start.
func serviceURL(t *testing.T) string {
	t.Helper()
	service.once.Do(func() { service.url, service.cmd, service.err = startService() })
	if service.err != nil {
		t.Fatal(service.err)
	}
	return service.url
}

func startService() (string, *exec.Cmd, error) {
	cli, _ := filepath.Abs(filepath.Join("..", "..", "packages", "server", "dist", "cli", "main.js"))
	if _, err := os.Stat(cli); err != nil {
		return "", nil, fmt.Errorf("the retryd CLI is not built (%v): run npm run build at the repository root", err)
	}
	cmd := exec.Command("node", cli, "serve", "--port", "0", "--store", "sqlite::memory:", "--allow-targets", "127.0.0.1/32")
	cmd.Env = append(os.Environ(), "RETRYD_SECRET_ORDERS_TOKEN="+secretValue, "RETRYD_API_KEY=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("cannot start node: %w", err)
	}
	started := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 1<<20), 1<<20)
		for lines.Scan() {
			var entry struct{ Event, URL string }
			if json.Unmarshal(lines.Bytes(), &entry) == nil && entry.Event == "start" {
				started <- entry.URL
			}
		}
	}()
	select {
	case url := <-started:
		return url, cmd, nil
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		return "", nil, fmt.Errorf("retryd serve printed no start line within 90 s")
	}
}

// target is a loopback HTTP server that answers each request with the next status of its script (the last one
// repeats), optionally with headers, and records what it received.
type target struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	header   http.Header
	received []received
}

type received struct {
	method, path string
	header       http.Header
	body         string
}

func newTarget(t *testing.T, statuses ...int) *target {
	tg := &target{statuses: statuses, header: http.Header{}}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tg.mu.Lock()
		tg.received = append(tg.received, received{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(body)})
		status := tg.statuses[len(tg.statuses)-1]
		if len(tg.received) <= len(tg.statuses) {
			status = tg.statuses[len(tg.received)-1]
		}
		for name, values := range tg.header {
			w.Header()[name] = values
		}
		tg.mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"answer":%d}`, status)
	}))
	t.Cleanup(tg.Close)
	return tg
}

// script replaces what the target answers from its next request on.
func (tg *target) script(statuses ...int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.statuses = append(make([]int, len(tg.received)), statuses...)
}

func (tg *target) requests() []received {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]received(nil), tg.received...)
}
